/* evtop — the columns of the model document's two tables (seeds/000: biz_message_event and
 * biz_outbox_event), written once. core/model.c builds the tables evtop reads by from these
 * lists and core/doctor.c the schema it checks a server against; tests/unit/check_doctor
 * compares them, column by column, with sql/mysql8/schema.sql and sql/mariadb/schema.sql.
 *
 * X(name, kind, type, nullable, def, role, comment), in the DDL's order:
 *   kind      how evtop reads and shows the value: ID, TEXT, INT, DATETIME or JSON (the
 *             EV_CT_ constants of core/model.h)
 *   type      the DDL's type. Both flavours write JSON; MariaDB stores it as LONGTEXT with a
 *             CHECK (json_valid(...)), which doctor accepts as JSON. The collation is the
 *             table's (ev_doctor_collation: utf8mb4_0900_ai_ci on MySQL 8, utf8mb4_unicode_ci
 *             on MariaDB, which lacks it).
 *   nullable  true where the DDL says DEFAULT NULL
 *   def       the DEFAULT clause's value, or NULL for none
 *   role      SHOWN: read by the lists and the detail pane's row; SHOWN_WRITTEN: that, and
 *             written by the operator actions (the GRANT UPDATE column list of
 *             sql/grants.sql, the guard's probe); BODY: the payload and headers, read only by
 *             the detail pane and the exports
 *   comment   the DDL's COMMENT, the model document's own words */
#ifndef EV_CORE_COLUMNS_H
#define EV_CORE_COLUMNS_H

/* clang-format off */
#define EV_MESSAGE_COLUMNS(X)                                                                      \
	X("id", ID, "BIGINT UNSIGNED", false, NULL, SHOWN, "主键ID")                                 \
	X("event_no", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "事件编号")                           \
	X("event_type", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "事件类型")                         \
	X("biz_type", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "业务类型")                           \
	X("biz_id", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "业务ID")                               \
	X("event_source", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "事件来源")                       \
	X("event_payload", JSON, "JSON", false, NULL, BODY, "事件内容")                              \
	X("event_status", INT, "TINYINT", false, "0", SHOWN_WRITTEN,                                 \
	  "事件状态：0待处理，1处理中，2处理成功，3处理失败，4已取消")                               \
	X("retry_count", INT, "INT", false, "0", SHOWN_WRITTEN, "已重试次数")                        \
	X("max_retry_count", INT, "INT", false, "3", SHOWN_WRITTEN, "最大重试次数")                  \
	X("next_retry_time", DATETIME, "DATETIME", true, NULL, SHOWN_WRITTEN, "下次重试时间")        \
	X("last_handle_time", DATETIME, "DATETIME", true, NULL, SHOWN, "最后处理时间")               \
	X("success_time", DATETIME, "DATETIME", true, NULL, SHOWN, "处理成功时间")                   \
	X("fail_reason", TEXT, "VARCHAR(1000)", true, NULL, SHOWN_WRITTEN, "失败原因")               \
	X("trace_id", TEXT, "VARCHAR(128)", true, NULL, SHOWN, "链路追踪ID")                         \
	X("remark", TEXT, "VARCHAR(500)", true, NULL, SHOWN, "备注")                                 \
	X("version", INT, "INT", false, "0", SHOWN_WRITTEN, "版本号")                                \
	X("deleted", INT, "TINYINT", false, "0", SHOWN, "删除标识：0未删除，1已删除")                \
	X("create_time", DATETIME, "DATETIME", false, "CURRENT_TIMESTAMP", SHOWN, "创建时间")        \
	X("update_time", DATETIME, "DATETIME", false,                                                \
	  "CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP", SHOWN_WRITTEN, "更新时间")

#define EV_OUTBOX_COLUMNS(X)                                                                       \
	X("id", ID, "BIGINT UNSIGNED", false, NULL, SHOWN, "主键ID")                                 \
	X("event_no", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "事件编号")                           \
	X("aggregate_type", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "聚合类型")                     \
	X("aggregate_id", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "聚合ID")                         \
	X("event_type", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "事件类型")                         \
	X("event_version", INT, "INT", false, "1", SHOWN, "事件版本")                                \
	X("event_source", TEXT, "VARCHAR(64)", false, NULL, SHOWN, "事件来源")                       \
	X("publish_channel", TEXT, "VARCHAR(32)", false, NULL, SHOWN,                                \
	  "发布通道：MQ，HTTP，EVENT_BUS")                                                           \
	X("topic", TEXT, "VARCHAR(128)", true, NULL, SHOWN, "消息主题")                              \
	X("routing_key", TEXT, "VARCHAR(128)", true, NULL, SHOWN, "路由键")                          \
	X("event_payload", JSON, "JSON", false, NULL, BODY, "事件内容")                              \
	X("event_headers", JSON, "JSON", true, NULL, BODY, "事件头信息")                             \
	X("publish_status", INT, "TINYINT", false, "0", SHOWN_WRITTEN,                               \
	  "发布状态：0待发布，1发布中，2发布成功，3发布失败，4已取消")                               \
	X("retry_count", INT, "INT", false, "0", SHOWN_WRITTEN, "已重试次数")                        \
	X("max_retry_count", INT, "INT", false, "5", SHOWN_WRITTEN, "最大重试次数")                  \
	X("next_retry_time", DATETIME, "DATETIME", true, NULL, SHOWN_WRITTEN, "下次重试时间")        \
	X("locked_by", TEXT, "VARCHAR(128)", true, NULL, SHOWN_WRITTEN, "锁定实例")                  \
	X("lock_until", DATETIME, "DATETIME", true, NULL, SHOWN_WRITTEN, "锁定过期时间")             \
	X("last_publish_time", DATETIME, "DATETIME", true, NULL, SHOWN, "最后发布时间")              \
	X("published_time", DATETIME, "DATETIME", true, NULL, SHOWN, "发布成功时间")                 \
	X("fail_reason", TEXT, "VARCHAR(1000)", true, NULL, SHOWN_WRITTEN, "失败原因")               \
	X("trace_id", TEXT, "VARCHAR(128)", true, NULL, SHOWN, "链路追踪ID")                         \
	X("remark", TEXT, "VARCHAR(500)", true, NULL, SHOWN, "备注")                                 \
	X("version", INT, "INT", false, "0", SHOWN_WRITTEN, "版本号")                                \
	X("deleted", INT, "TINYINT", false, "0", SHOWN, "删除标识：0未删除，1已删除")                \
	X("create_time", DATETIME, "DATETIME", false, "CURRENT_TIMESTAMP", SHOWN, "创建时间")        \
	X("update_time", DATETIME, "DATETIME", false,                                                \
	  "CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP", SHOWN_WRITTEN, "更新时间")
/* clang-format on */

/* A role's two facts, for the generators: shown in lists, written by the operator actions. */
#define EV_COLUMN_ROLE_SHOWN_SHOWN         true
#define EV_COLUMN_ROLE_SHOWN_SHOWN_WRITTEN true
#define EV_COLUMN_ROLE_SHOWN_BODY          false
/* Expands to `x,` for a written column, to nothing for the others. */
#define EV_COLUMN_IF_WRITTEN_SHOWN(x)
#define EV_COLUMN_IF_WRITTEN_SHOWN_WRITTEN(x) x,
#define EV_COLUMN_IF_WRITTEN_BODY(x)

#endif
