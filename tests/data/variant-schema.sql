-- evtop tests: a variant of the model's two tables (sql/mariadb/schema.sql) that can hold what
-- the real ones refuse: every string column VARBINARY (4 bytes per character of the original
-- width) and the payloads LONGBLOB instead of utf8mb4 and JSON, so rows can carry invalid
-- UTF-8, raw control bytes inside a payload string, a payload that is not JSON at all and one
-- nested 100 levels deep (MariaDB's JSON_VALID stops at 31). Same columns, same indexes, so
-- every query of evtop runs on them unchanged: point evtop at them with
--   --outbox-table hostile_outbox_event --message-table hostile_message_event
-- Loaded by tests/screen/hostile.sh and tests/cli/hostile.sh after sql/mariadb/schema.sql.

CREATE TABLE hostile_message_event (
    id BIGINT UNSIGNED NOT NULL,
    event_no VARBINARY(256) NOT NULL,
    event_type VARBINARY(256) NOT NULL,
    biz_type VARBINARY(256) NOT NULL,
    biz_id VARBINARY(256) NOT NULL,
    event_source VARBINARY(256) NOT NULL,
    event_payload LONGBLOB NOT NULL,
    event_status TINYINT NOT NULL DEFAULT 0,
    retry_count INT NOT NULL DEFAULT 0,
    max_retry_count INT NOT NULL DEFAULT 3,
    next_retry_time DATETIME DEFAULT NULL,
    last_handle_time DATETIME DEFAULT NULL,
    success_time DATETIME DEFAULT NULL,
    fail_reason VARBINARY(4000) DEFAULT NULL,
    trace_id VARBINARY(512) DEFAULT NULL,
    remark VARBINARY(2000) DEFAULT NULL,
    version INT NOT NULL DEFAULT 0,
    deleted TINYINT NOT NULL DEFAULT 0,
    create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    update_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=binary;

ALTER TABLE hostile_message_event
    ADD UNIQUE KEY uk_event_no (event_no),
    ADD KEY idx_status_retry_time (event_status, next_retry_time, retry_count),
    ADD KEY idx_biz_type_biz_id (biz_type, biz_id),
    ADD KEY idx_event_type_create_time (event_type, create_time),
    ADD KEY idx_trace_id (trace_id),
    ADD KEY idx_create_time (create_time);

CREATE TABLE hostile_outbox_event (
    id BIGINT UNSIGNED NOT NULL,
    event_no VARBINARY(256) NOT NULL,
    aggregate_type VARBINARY(256) NOT NULL,
    aggregate_id VARBINARY(256) NOT NULL,
    event_type VARBINARY(256) NOT NULL,
    event_version INT NOT NULL DEFAULT 1,
    event_source VARBINARY(256) NOT NULL,
    publish_channel VARBINARY(128) NOT NULL,
    topic VARBINARY(512) DEFAULT NULL,
    routing_key VARBINARY(512) DEFAULT NULL,
    event_payload LONGBLOB NOT NULL,
    event_headers LONGBLOB DEFAULT NULL,
    publish_status TINYINT NOT NULL DEFAULT 0,
    retry_count INT NOT NULL DEFAULT 0,
    max_retry_count INT NOT NULL DEFAULT 5,
    next_retry_time DATETIME DEFAULT NULL,
    locked_by VARBINARY(512) DEFAULT NULL,
    lock_until DATETIME DEFAULT NULL,
    last_publish_time DATETIME DEFAULT NULL,
    published_time DATETIME DEFAULT NULL,
    fail_reason VARBINARY(4000) DEFAULT NULL,
    trace_id VARBINARY(512) DEFAULT NULL,
    remark VARBINARY(2000) DEFAULT NULL,
    version INT NOT NULL DEFAULT 0,
    deleted TINYINT NOT NULL DEFAULT 0,
    create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    update_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=binary;

ALTER TABLE hostile_outbox_event
    ADD UNIQUE KEY uk_event_no (event_no),
    ADD KEY idx_status_retry_time (publish_status, next_retry_time, retry_count),
    ADD KEY idx_status_lock_until (publish_status, lock_until),
    ADD KEY idx_aggregate (aggregate_type, aggregate_id),
    ADD KEY idx_event_type_create_time (event_type, create_time),
    ADD KEY idx_topic_create_time (topic, create_time),
    ADD KEY idx_trace_id (trace_id),
    ADD KEY idx_create_time (create_time);
