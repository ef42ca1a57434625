-- evtop: example accounts. Replace the database name (events), the host pattern and the
-- passwords; run as an administrator. evtop detects what an account may do and shows it.

-- A watching account: dashboards, lists, details. REPLICA MONITOR (MariaDB 10.5.9+; on
-- MySQL 8 use REPLICATION CLIENT) lets it read replica lag.
CREATE USER 'evtop_watch'@'%' IDENTIFIED BY 'change-me';
GRANT SELECT ON events.biz_message_event TO 'evtop_watch'@'%';
GRANT SELECT ON events.biz_outbox_event TO 'evtop_watch'@'%';
-- Optional: who did what (the console's :audit and each event's history, evtop audit); without
-- it those say which grant is missing and the rest works.
GRANT SELECT ON events.evtop_audit TO 'evtop_watch'@'%';
-- Personal data shown in the clear (--unmask, the console's U) is recorded here (doc/privacy.md).
GRANT INSERT ON events.evtop_access_log TO 'evtop_watch'@'%';
GRANT REPLICA MONITOR ON *.* TO 'evtop_watch'@'%';

-- A compensating account: also UPDATE on exactly the columns the operator actions write
-- (retry, schedule retry, cancel, recover) and INSERT on the audit table.
CREATE USER 'evtop_ops'@'%' IDENTIFIED BY 'change-me';
GRANT SELECT ON events.biz_message_event TO 'evtop_ops'@'%';
GRANT SELECT ON events.biz_outbox_event TO 'evtop_ops'@'%';
GRANT SELECT, INSERT ON events.evtop_audit TO 'evtop_ops'@'%';
GRANT INSERT ON events.evtop_access_log TO 'evtop_ops'@'%';
GRANT UPDATE (event_status, retry_count, max_retry_count, next_retry_time, fail_reason,
              version, update_time)
    ON events.biz_message_event TO 'evtop_ops'@'%';
GRANT UPDATE (publish_status, retry_count, max_retry_count, next_retry_time, locked_by,
              lock_until, fail_reason, version, update_time)
    ON events.biz_outbox_event TO 'evtop_ops'@'%';
GRANT REPLICA MONITOR ON *.* TO 'evtop_ops'@'%';

-- The Prometheus exporter (evtop metrics, doc/metrics.md): SELECT on the two tables is all it
-- needs (it never writes, whatever the account may do); REPLICA MONITOR for the lag of a
-- source read on a replica. Use it from /etc/evtop/metrics.cnf.
CREATE USER 'evtop_metrics'@'localhost' IDENTIFIED BY 'change-me';
GRANT SELECT ON events.biz_message_event TO 'evtop_metrics'@'localhost';
GRANT SELECT ON events.biz_outbox_event TO 'evtop_metrics'@'localhost';
GRANT REPLICA MONITOR ON *.* TO 'evtop_metrics'@'localhost';

-- The archiving account (evtop archive, doc/archive.md): it deletes finished rows from the
-- online tables, inserts them into the archive tables (CREATE to make them with
-- --create-archive-table), and records each batch in evtop_archive_log.
CREATE USER 'evtop_archive'@'localhost' IDENTIFIED BY 'change-me';
GRANT SELECT, DELETE ON events.biz_message_event TO 'evtop_archive'@'localhost';
GRANT SELECT, DELETE ON events.biz_outbox_event TO 'evtop_archive'@'localhost';
GRANT SELECT, INSERT, CREATE, ALTER, INDEX ON events.biz_message_event_archive TO 'evtop_archive'@'localhost';
GRANT SELECT, INSERT, CREATE, ALTER, INDEX ON events.biz_outbox_event_archive TO 'evtop_archive'@'localhost';
GRANT INSERT ON events.evtop_archive_log TO 'evtop_archive'@'localhost';
GRANT REPLICA MONITOR ON *.* TO 'evtop_archive'@'localhost';
