-- evtop: the model document's DDL for MariaDB 10.11+.
-- Identical to sql/mysql8/schema.sql except the collation: MariaDB has no utf8mb4_0900_ai_ci;
-- utf8mb4_unicode_ci is its accent- and case-insensitive equivalent. JSON is MariaDB's alias
-- for LONGTEXT with a JSON_VALID check.
-- Load into an empty database: mariadb DB < sql/mariadb/schema.sql

CREATE TABLE biz_message_event (
    id BIGINT UNSIGNED NOT NULL COMMENT '主键ID',
    event_no VARCHAR(64) NOT NULL COMMENT '事件编号',
    event_type VARCHAR(64) NOT NULL COMMENT '事件类型',
    biz_type VARCHAR(64) NOT NULL COMMENT '业务类型',
    biz_id VARCHAR(64) NOT NULL COMMENT '业务ID',
    event_source VARCHAR(64) NOT NULL COMMENT '事件来源',
    event_payload JSON NOT NULL COMMENT '事件内容',
    event_status TINYINT NOT NULL DEFAULT 0 COMMENT '事件状态：0待处理，1处理中，2处理成功，3处理失败，4已取消',
    retry_count INT NOT NULL DEFAULT 0 COMMENT '已重试次数',
    max_retry_count INT NOT NULL DEFAULT 3 COMMENT '最大重试次数',
    next_retry_time DATETIME DEFAULT NULL COMMENT '下次重试时间',
    last_handle_time DATETIME DEFAULT NULL COMMENT '最后处理时间',
    success_time DATETIME DEFAULT NULL COMMENT '处理成功时间',
    fail_reason VARCHAR(1000) DEFAULT NULL COMMENT '失败原因',
    trace_id VARCHAR(128) DEFAULT NULL COMMENT '链路追踪ID',
    remark VARCHAR(500) DEFAULT NULL COMMENT '备注',
    version INT NOT NULL DEFAULT 0 COMMENT '版本号',
    deleted TINYINT NOT NULL DEFAULT 0 COMMENT '删除标识：0未删除，1已删除',
    create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT '创建时间',
    update_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP COMMENT '更新时间',
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci COMMENT='业务消息事件表';

ALTER TABLE biz_message_event
    ADD UNIQUE KEY uk_event_no (event_no),
    ADD KEY idx_status_retry_time (event_status, next_retry_time, retry_count),
    ADD KEY idx_biz_type_biz_id (biz_type, biz_id),
    ADD KEY idx_event_type_create_time (event_type, create_time),
    ADD KEY idx_trace_id (trace_id),
    ADD KEY idx_create_time (create_time);

CREATE TABLE biz_outbox_event (
    id BIGINT UNSIGNED NOT NULL COMMENT '主键ID',
    event_no VARCHAR(64) NOT NULL COMMENT '事件编号',
    aggregate_type VARCHAR(64) NOT NULL COMMENT '聚合类型',
    aggregate_id VARCHAR(64) NOT NULL COMMENT '聚合ID',
    event_type VARCHAR(64) NOT NULL COMMENT '事件类型',
    event_version INT NOT NULL DEFAULT 1 COMMENT '事件版本',
    event_source VARCHAR(64) NOT NULL COMMENT '事件来源',
    publish_channel VARCHAR(32) NOT NULL COMMENT '发布通道：MQ，HTTP，EVENT_BUS',
    topic VARCHAR(128) DEFAULT NULL COMMENT '消息主题',
    routing_key VARCHAR(128) DEFAULT NULL COMMENT '路由键',
    event_payload JSON NOT NULL COMMENT '事件内容',
    event_headers JSON DEFAULT NULL COMMENT '事件头信息',
    publish_status TINYINT NOT NULL DEFAULT 0 COMMENT '发布状态：0待发布，1发布中，2发布成功，3发布失败，4已取消',
    retry_count INT NOT NULL DEFAULT 0 COMMENT '已重试次数',
    max_retry_count INT NOT NULL DEFAULT 5 COMMENT '最大重试次数',
    next_retry_time DATETIME DEFAULT NULL COMMENT '下次重试时间',
    locked_by VARCHAR(128) DEFAULT NULL COMMENT '锁定实例',
    lock_until DATETIME DEFAULT NULL COMMENT '锁定过期时间',
    last_publish_time DATETIME DEFAULT NULL COMMENT '最后发布时间',
    published_time DATETIME DEFAULT NULL COMMENT '发布成功时间',
    fail_reason VARCHAR(1000) DEFAULT NULL COMMENT '失败原因',
    trace_id VARCHAR(128) DEFAULT NULL COMMENT '链路追踪ID',
    remark VARCHAR(500) DEFAULT NULL COMMENT '备注',
    version INT NOT NULL DEFAULT 0 COMMENT '版本号',
    deleted TINYINT NOT NULL DEFAULT 0 COMMENT '删除标识：0未删除，1已删除',
    create_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT '创建时间',
    update_time DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP COMMENT '更新时间',
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci COMMENT='业务Outbox事件表';

ALTER TABLE biz_outbox_event
    ADD UNIQUE KEY uk_event_no (event_no),
    ADD KEY idx_status_retry_time (publish_status, next_retry_time, retry_count),
    ADD KEY idx_status_lock_until (publish_status, lock_until),
    ADD KEY idx_aggregate (aggregate_type, aggregate_id),
    ADD KEY idx_event_type_create_time (event_type, create_time),
    ADD KEY idx_topic_create_time (topic, create_time),
    ADD KEY idx_trace_id (trace_id),
    ADD KEY idx_create_time (create_time);
