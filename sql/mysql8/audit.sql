-- evtop: the audit tables. evtop_audit: when it exists, every operator write adds one row here in the same
-- transaction as the guarded UPDATE it records (PRODUCT.md section 2, "Audit").
-- The same record also goes to the local JSON-lines audit file; see doc/actions.md.

CREATE TABLE evtop_audit (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'audit row id',
    audit_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) COMMENT 'server time of the write',
    source VARCHAR(64) NOT NULL COMMENT 'evtop source name (server or shard)',
    os_user VARCHAR(64) NOT NULL COMMENT 'operating-system user running evtop',
    sudo_user VARCHAR(64) DEFAULT NULL COMMENT 'SUDO_USER, when run through sudo',
    ssh_connection VARCHAR(128) DEFAULT NULL COMMENT 'SSH_CONNECTION of the session',
    operator VARCHAR(128) DEFAULT NULL COMMENT 'operator or ticket id (--operator)',
    db_user VARCHAR(288) NOT NULL COMMENT 'CURRENT_USER() of the connection',
    table_name VARCHAR(64) NOT NULL COMMENT 'event table written',
    event_id BIGINT UNSIGNED NOT NULL COMMENT 'id of the event row',
    event_no VARCHAR(64) NOT NULL COMMENT 'event_no of the event row',
    action VARCHAR(32) NOT NULL COMMENT 'retry_now, retry_schedule, cancel, recover',
    before_status TINYINT NOT NULL COMMENT 'status as seen before the write',
    before_retry_count INT NOT NULL COMMENT 'retry_count as seen',
    before_max_retry_count INT NOT NULL COMMENT 'max_retry_count as seen',
    before_next_retry_time DATETIME DEFAULT NULL COMMENT 'next_retry_time as seen',
    before_version INT NOT NULL COMMENT 'version as seen (the guard)',
    after_status TINYINT DEFAULT NULL COMMENT 'status after the write; NULL when not applied',
    reason VARCHAR(1000) DEFAULT NULL COMMENT 'fail_reason written, or the operator reason',
    result VARCHAR(16) NOT NULL COMMENT 'applied, skipped or failed',
    PRIMARY KEY (id),
    KEY idx_audit_time (audit_time),
    KEY idx_table_event (table_name, event_id),
    KEY idx_event_no (event_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci COMMENT='evtop operator actions';

-- evtop: the access log. When it exists and the account may INSERT into it, every showing of
-- masked personal data in the clear (--unmask, the console's U) adds one row per event shown,
-- written before the data is shown; the same record always goes to the local audit file
-- (doc/privacy.md). evtop_audit's per-change columns do not fit a read, hence a table of its
-- own. A watching account needs only INSERT here (sql/grants.sql).

CREATE TABLE evtop_access_log (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'access row id',
    access_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) COMMENT 'server time of the showing',
    source VARCHAR(64) NOT NULL COMMENT 'evtop source name (server or shard)',
    os_user VARCHAR(64) NOT NULL COMMENT 'operating-system user running evtop',
    sudo_user VARCHAR(64) DEFAULT NULL COMMENT 'SUDO_USER, when run through sudo',
    ssh_connection VARCHAR(128) DEFAULT NULL COMMENT 'SSH_CONNECTION of the session',
    operator VARCHAR(128) DEFAULT NULL COMMENT 'operator or ticket id (--operator)',
    db_user VARCHAR(288) NOT NULL COMMENT 'CURRENT_USER() of the connection',
    table_name VARCHAR(64) NOT NULL COMMENT 'event table read',
    event_no VARCHAR(64) NOT NULL COMMENT 'event_no of an event shown in the clear',
    action VARCHAR(16) NOT NULL COMMENT 'unmask',
    shown_count INT UNSIGNED NOT NULL COMMENT 'events shown in the clear by the same use',
    reason VARCHAR(1000) NOT NULL COMMENT 'why the operator needed the clear text',
    PRIMARY KEY (id),
    KEY idx_access_time (access_time),
    KEY idx_event_no (event_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci COMMENT='evtop: personal data shown in the clear';

-- evtop: the archive log. When it exists, every batch of `evtop archive` (doc/archive.md)
-- adds one row here in the same transaction as the rows it moves or deletes; evtop_audit's
-- per-event columns do not fit a batch. The archiving account needs INSERT here.

CREATE TABLE evtop_archive_log (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'log row id',
    archive_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) COMMENT 'server time of the batch',
    run_id VARCHAR(64) NOT NULL COMMENT 'the run the batch belongs to',
    batch_no INT UNSIGNED NOT NULL COMMENT 'the batch within the run, from 1',
    source VARCHAR(64) NOT NULL COMMENT 'evtop source name (server or shard)',
    os_user VARCHAR(64) NOT NULL COMMENT 'operating-system user running evtop',
    sudo_user VARCHAR(64) DEFAULT NULL COMMENT 'SUDO_USER, when run through sudo',
    ssh_connection VARCHAR(128) DEFAULT NULL COMMENT 'SSH_CONNECTION of the session',
    operator VARCHAR(128) DEFAULT NULL COMMENT 'operator or ticket id (--operator)',
    db_user VARCHAR(288) NOT NULL COMMENT 'CURRENT_USER() of the connection',
    table_name VARCHAR(64) NOT NULL COMMENT 'online table the rows left',
    target VARCHAR(16) NOT NULL COMMENT 'table, file or purge',
    target_name VARCHAR(1024) DEFAULT NULL COMMENT 'archive table or file; NULL for purge',
    cutoff DATETIME NOT NULL COMMENT 'rows created before this moved',
    first_id BIGINT UNSIGNED NOT NULL COMMENT 'first row moved, in (create_time, id) order',
    last_id BIGINT UNSIGNED NOT NULL COMMENT 'last row moved',
    first_create_time DATETIME NOT NULL COMMENT 'create_time of the first row',
    last_create_time DATETIME NOT NULL COMMENT 'create_time of the last row',
    row_count INT UNSIGNED NOT NULL COMMENT 'rows moved by the batch',
    checksum INT UNSIGNED NOT NULL COMMENT 'XOR of the rows'' CRC32 over every column',
    PRIMARY KEY (id),
    KEY idx_archive_time (archive_time),
    KEY idx_table_time (table_name, archive_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci COMMENT='evtop: archive batches';
