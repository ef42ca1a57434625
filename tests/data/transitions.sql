-- evtop tests: record every status change of the two event tables, for tests that check
-- which transitions a program made (tests/db/check_sim.c checks that the simulator makes only
-- the applications' transitions of src/core/model.c). Not part of the schema: a test loads it
-- after the harness has loaded sql/mariadb/schema.sql. One statement per trigger body, so no
-- DELIMITER is needed (tests/lib/testdb.c splits on ';' at a line end).

CREATE TABLE evtop_test_transitions (
    seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    table_name VARCHAR(64) NOT NULL,
    event_id BIGINT UNSIGNED NOT NULL,
    old_status TINYINT NOT NULL,
    new_status TINYINT NOT NULL,
    old_retry_count INT NOT NULL,
    new_retry_count INT NOT NULL,
    old_locked_by VARCHAR(128) DEFAULT NULL,
    new_locked_by VARCHAR(128) DEFAULT NULL,
    old_fail_reason VARCHAR(1000) DEFAULT NULL,
    new_fail_reason VARCHAR(1000) DEFAULT NULL,
    changed_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (seq),
    KEY idx_table_event (table_name, event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TRIGGER evtop_test_outbox_transition AFTER UPDATE ON biz_outbox_event FOR EACH ROW
    INSERT INTO evtop_test_transitions (table_name, event_id, old_status, new_status,
        old_retry_count, new_retry_count, old_locked_by, new_locked_by, old_fail_reason,
        new_fail_reason)
    VALUES ('biz_outbox_event', NEW.id, OLD.publish_status, NEW.publish_status,
        OLD.retry_count, NEW.retry_count, OLD.locked_by, NEW.locked_by, OLD.fail_reason,
        NEW.fail_reason);

CREATE TRIGGER evtop_test_message_transition AFTER UPDATE ON biz_message_event FOR EACH ROW
    INSERT INTO evtop_test_transitions (table_name, event_id, old_status, new_status,
        old_retry_count, new_retry_count, old_locked_by, new_locked_by, old_fail_reason,
        new_fail_reason)
    VALUES ('biz_message_event', NEW.id, OLD.event_status, NEW.event_status,
        OLD.retry_count, NEW.retry_count, NULL, NULL, OLD.fail_reason, NEW.fail_reason);
