-- evtop tests: hostile input. Rows an ops console must show without breaking, without letting
-- a byte of them drive the terminal, and without writing anything. Loaded by
-- tests/screen/hostile.sh and tests/cli/hostile.sh after sql/mariadb/schema.sql and
-- tests/data/variant-schema.sql, with the clock pinned (SET timestamp) to 2026-06-01 12:00:00;
-- every time below is explicit.
--
-- In the model's tables (utf8mb4, JSON payloads: what MariaDB accepts there):
--   id 0 (both tables): ESC/CSI/OSC sequences, BEL, CR/LF/TAB, BS, NUL, DEL, the 8-bit CSI
--     U+009B and a right-to-left override U+202E in every text column, and inside the
--     payload's strings and keys (as JSON escapes \u001b, and the C1/bidi code points raw);
--   id 18446744073709551615: NULL in every nullable column;
--   id 2: identifiers at their column's full length (64 characters; 64 CJK characters; 32 for
--     publish_channel; 128 for topic, routing_key, locked_by, trace_id);
--   id 3: Chinese, emoji (a ZWJ family too) and combining marks; a fail_reason of exactly
--     1000 characters (2,900 bytes) ending in TAIL尾巴-END;
--   id 4: a payload of about 1 MB (an array of 14,000 objects), processing past its lock;
--   id 5: a payload nested 31 levels deep (MariaDB's JSON limit);
--   ids 1000..3999 (outbox) and 1000..1299 (message): 3000 and 300 distinct event types, so
--     the dashboard has 3000 groups; every 500th type carries an escape sequence.
-- In the variant tables (VARBINARY/LONGBLOB, tests/data/variant-schema.sql):
--   id 0: invalid UTF-8 (lone continuation bytes, overlong forms, surrogates, bytes above
--     F4, a raw 0x9B) and raw control bytes in every text column; a payload that is not JSON;
--   id 1: a JSON-looking payload with raw ESC and BEL inside its strings (not JSON);
--   id 2: a payload nested 100 levels deep (valid JSON, refused by MariaDB's JSON type);
--   id 3: 1 MB of text lines with escapes and invalid bytes; id 4: a single 1 MB line;
--   id 18446744073709551615: NULL in every nullable column; id 5: 64 emoji identifiers.
-- Statuses are spread so that every row appears in some list: failed, pending, stuck,
-- cancelled (in the window).

SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci;
SET SESSION group_concat_max_len = 16777216;
SET @esc = CHAR(27 USING utf8mb4);
SET @bel = CHAR(7 USING utf8mb4);
SET @csi8 = CHAR(0xC29B USING utf8mb4);
SET @rlo = CHAR(0xE280AE USING utf8mb4);
-- 48 characters: clear the screen, home, set the title, blink red, an 8-bit CSI asking for
-- the cursor position, a bidi override, CR LF TAB BS NUL DEL.
SET @hostile = CONCAT(@esc, '[2J', @esc, '[H', @esc, ']0;PWNED', @bel, @esc, '[31;5mRED',
  @esc, '[0m', @csi8, '6n', @rlo, 'gpj.exe', CHAR(13 USING utf8mb4), CHAR(10 USING utf8mb4),
  CHAR(9 USING utf8mb4), CHAR(8 USING utf8mb4), CHAR(0 USING utf8mb4), CHAR(127 USING utf8mb4),
  'END');
-- 24 characters, for the short columns.
SET @short = CONCAT(@esc, ']0;PWNED', @bel, @esc, '[6n', @csi8, '2J', @rlo, 'X');
SET @now = '2026-06-01 12:00:00';

-- ---- the model's tables ------------------------------------------------------------------

INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, routing_key, event_payload, event_headers,
  publish_status, retry_count, max_retry_count, next_retry_time, locked_by, lock_until,
  last_publish_time, published_time, fail_reason, trace_id, remark, create_time, update_time)
VALUES
 (0, CONCAT('HX-0', @short), CONCAT('AGG', @hostile), CONCAT('ID', @hostile),
  CONCAT('HOSTILE', @short), CONCAT('svc', @hostile), @short, CONCAT('topic', @hostile),
  CONCAT('rk', @hostile),
  JSON_OBJECT('msg', @hostile, CONCAT('key', @esc, '[2J'), 'escaped key',
    'c1', CONCAT('csi', @csi8, '31m'), 'bidi', CONCAT(@rlo, 'gpj.exe'),
    'nested', JSON_ARRAY(@hostile, JSON_OBJECT(@short, @short))),
  JSON_OBJECT('h', @hostile),
  3, 1, 5, '2026-06-01 11:59:00', CONCAT('pub', @hostile), NULL, '2026-06-01 11:58:00', NULL,
  CONCAT('fail ', @hostile), CONCAT('trace-h', @hostile), CONCAT('remark ', @hostile),
  '2026-06-01 11:50:00', '2026-06-01 11:59:00'),
 (18446744073709551615, 'HX-NULLS', 'ORDER', 'O-NULL', 'NULLS_EVERYWHERE', 'order-service', 'MQ',
  NULL, NULL, '{}', NULL, 3, 0, 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  '2026-06-01 11:51:00', '2026-06-01 11:51:00'),
 (2, REPEAT('N', 64), REPEAT('T', 64), REPEAT('中', 64), REPEAT('E', 64), REPEAT('S', 64),
  REPEAT('C', 32), REPEAT('话', 128), REPEAT('R', 128), '{"long": true}', NULL, 3, 2, 5,
  '2026-06-01 11:00:00', REPEAT('锁', 128), NULL, NULL, NULL, REPEAT('F', 1000), REPEAT('t', 128),
  REPEAT('备', 500), '2026-06-01 11:52:00', '2026-06-01 11:52:00'),
 (3, 'HX-中文-🚀-é', '订单', '订单🚀', 'ORDER_创建_🚀', 'order-服务', 'MQ', '主题.🚀',
  NULL, JSON_OBJECT('name', '订单商品 👩‍👩‍👧 é', '中文键', '😀😀😀', 'combining', 'a̐éö̲'),
  NULL, 3, 3, 5, NULL, NULL, NULL, NULL, NULL,
  CONCAT(REPEAT(CONCAT('调用下游超时', '🚀', 'e', CHAR(0xCC81 USING utf8mb4)), 110), 'TAIL尾巴-END'),
  'trace-中文', '备注 👩‍👩‍👧', '2026-06-01 11:53:00', '2026-06-01 11:53:00'),
 (4, 'HX-1MB', 'ORDER', 'O-1MB', 'BIG_PAYLOAD', 'order-service', 'MQ', 'order.event', NULL,
  JSON_OBJECT('items', (SELECT JSON_ARRAYAGG(JSON_OBJECT('sku', CONCAT('SKU-', seq), 'qty', seq,
    'esc', CONCAT(@esc, '[2J'), 'name', '订单商品')) FROM seq_1_to_14000)),
  NULL, 1, 0, 5, NULL, CONCAT('publisher', @short), '2026-06-01 11:00:00', NULL, NULL, NULL,
  NULL, NULL, '2026-06-01 11:54:00', '2026-06-01 11:54:00'),
 (5, 'HX-DEEP31', 'ORDER', 'O-DEEP', 'DEEP_PAYLOAD', 'order-service', 'MQ', 'order.event', NULL,
  CONCAT(REPEAT('{"a":', 30), '[1]', REPEAT('}', 30)), NULL, 0, 0, 5, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, '2026-06-01 11:55:00', '2026-06-01 11:55:00');

-- 3000 event types, one pending event each (and every 7th failed); every 500th type carries
-- an escape sequence.
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  next_retry_time, fail_reason, create_time, update_time)
SELECT 999 + seq, CONCAT('HX-T', seq), 'ORDER', CONCAT('O', seq),
  IF(seq % 500 = 0, CONCAT('TYPE_', LPAD(seq, 4, '0'), @short), CONCAT('TYPE_', LPAD(seq, 4, '0'))),
  'order-service', 'MQ', 'order.event', '{}', IF(seq % 7 = 0, 3, 0), 0,
  IF(seq % 7 = 0, '2026-06-01 11:00:00', NULL), IF(seq % 7 = 0, CONCAT('reason ', seq % 13), NULL),
  '2026-06-01 11:30:00' - INTERVAL (seq % 1800) SECOND, '2026-06-01 11:30:00'
FROM seq_1_to_3000;

INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time, last_handle_time,
  success_time, fail_reason, trace_id, remark, create_time, update_time)
VALUES
 (0, CONCAT('HX-0', @short), CONCAT('HOSTILE', @short), CONCAT('BIZ', @hostile),
  CONCAT('ID', @hostile), CONCAT('svc', @hostile),
  JSON_OBJECT('msg', @hostile, CONCAT('key', @esc, '[2J'), 'escaped key', 'c1',
    CONCAT('csi', @csi8, '31m'), 'bidi', CONCAT(@rlo, 'gpj.exe')),
  3, 1, 3, '2026-06-01 11:59:00', '2026-06-01 11:58:00', NULL, CONCAT('fail ', @hostile),
  CONCAT('trace-h', @hostile), CONCAT('remark ', @hostile), '2026-06-01 11:50:00',
  '2026-06-01 11:59:00'),
 (18446744073709551615, 'HX-NULLS', 'NULLS_EVERYWHERE', 'ORDER', 'O-NULL', 'order-service', '{}',
  3, 0, 3, NULL, NULL, NULL, NULL, NULL, NULL, '2026-06-01 11:51:00', '2026-06-01 11:51:00'),
 (2, REPEAT('N', 64), REPEAT('E', 64), REPEAT('T', 64), REPEAT('中', 64), REPEAT('S', 64),
  '{"long": true}', 3, 2, 3, '2026-06-01 11:00:00', NULL, NULL, REPEAT('F', 1000),
  REPEAT('t', 128), REPEAT('备', 500), '2026-06-01 11:52:00', '2026-06-01 11:52:00'),
 (3, 'HX-中文-🚀-é', 'ORDER_创建_🚀', '订单', '订单🚀', 'order-服务',
  JSON_OBJECT('name', '订单商品 👩‍👩‍👧 é', '中文键', '😀😀😀'), 3, 3, 3, NULL,
  '2026-06-01 11:00:00', NULL,
  CONCAT(REPEAT(CONCAT('调用下游超时', '🚀', 'e', CHAR(0xCC81 USING utf8mb4)), 110), 'TAIL尾巴-END'),
  'trace-中文', '备注', '2026-06-01 11:53:00', '2026-06-01 11:53:00'),
 (4, 'HX-1MB', 'BIG_PAYLOAD', 'ORDER', 'O-1MB', 'order-service',
  JSON_OBJECT('items', (SELECT JSON_ARRAYAGG(JSON_OBJECT('sku', CONCAT('SKU-', seq), 'qty', seq,
    'esc', CONCAT(@esc, '[2J'), 'name', '订单商品')) FROM seq_1_to_14000)),
  1, 0, 3, NULL, '2026-06-01 11:00:00', NULL, NULL, NULL, NULL, '2026-06-01 11:54:00',
  '2026-06-01 11:54:00'),
 (5, 'HX-DEEP31', 'DEEP_PAYLOAD', 'ORDER', 'O-DEEP', 'order-service',
  CONCAT(REPEAT('{"a":', 30), '[1]', REPEAT('}', 30)), 0, 0, 3, NULL, NULL, NULL, NULL, NULL,
  NULL, '2026-06-01 11:55:00', '2026-06-01 11:55:00');

INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, create_time, update_time)
SELECT 999 + seq, CONCAT('HX-T', seq),
  IF(seq % 100 = 0, CONCAT('MTYPE_', LPAD(seq, 4, '0'), @short), CONCAT('MTYPE_', LPAD(seq, 4, '0'))),
  'ORDER', CONCAT('O', seq), 'order-service', '{}', 0,
  '2026-06-01 11:30:00' - INTERVAL (seq % 1800) SECOND, '2026-06-01 11:30:00'
FROM seq_1_to_300;

-- ---- the variant tables: bytes the model's tables refuse --------------------------------

SET @bad = CONCAT(X'FF', X'FE', X'80', X'C0AF', X'E080AF', X'EDA080', X'F4908080', X'F888808080',
  X'9B', '6n', X'1B', '[2J', X'1B5D303B50574E4544', X'07', X'C3');
SET @badshort = CONCAT(X'FF', X'C0AF', X'9B', '6n', X'1B', ']0;P', X'07', X'ED');

INSERT INTO hostile_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, routing_key, event_payload, event_headers,
  publish_status, retry_count, max_retry_count, next_retry_time, locked_by, lock_until,
  fail_reason, trace_id, remark, create_time, update_time)
VALUES
 (0, CONCAT('VX-0', @badshort), CONCAT('AGG', @bad), CONCAT('ID', @bad), CONCAT('BAD', @bad),
  CONCAT('svc', @bad), @badshort, CONCAT('topic', @bad), CONCAT('rk', @bad),
  CONCAT('status=FAILED ', X'1B5D303B50574E454407', X'FFFE', '\nline 2 ', X'9B', '31m', @bad),
  CONCAT('{"h": "', X'1B', '[2J"}'), 3, 1, 5, '2026-06-01 11:59:00', CONCAT('pub', @bad), NULL,
  CONCAT('fail ', @bad), CONCAT('trace-v', @badshort), CONCAT('remark ', @bad),
  '2026-06-01 11:50:00', '2026-06-01 11:59:00'),
 (1, 'VX-RAWESC', 'ORDER', 'O1', 'RAW_ESC_JSON', 'order-service', 'MQ', 'order.event', NULL,
  CONCAT('{"msg": "', X'1B', '[2J', X'1B', ']0;PWNED', X'07', '", "n": 1}'), NULL, 3, 0, 5,
  '2026-06-01 11:00:00', NULL, NULL, 'raw escapes in the payload', NULL, NULL,
  '2026-06-01 11:51:00', '2026-06-01 11:51:00'),
 (2, 'VX-DEEP100', 'ORDER', 'O2', 'DEEP100', 'order-service', 'MQ', 'order.event', NULL,
  CONCAT(REPEAT('{"a":[', 50), '"deep"', REPEAT(']}', 50)), NULL, 3, 0, 5,
  '2026-06-01 11:00:00', NULL, NULL, '100 levels', NULL, NULL, '2026-06-01 11:52:00',
  '2026-06-01 11:52:00'),
 (3, 'VX-1MB-LINES', 'ORDER', 'O3', 'BIG_TEXT', 'order-service', 'MQ', 'order.event', NULL,
  REPEAT(CONCAT('line ', X'1B', '[31m', X'FF', ' 中文 ', X'9B', '\n'), 50000), NULL, 3, 0, 5,
  '2026-06-01 11:00:00', NULL, NULL, '1 MB of lines', NULL, NULL, '2026-06-01 11:53:00',
  '2026-06-01 11:53:00'),
 (4, 'VX-1MB-ONE-LINE', 'ORDER', 'O4', 'BIG_TEXT', 'order-service', 'MQ', 'order.event', NULL,
  REPEAT(CONCAT('x', X'1B', '[2J', X'07', 'y'), 200000), NULL, 1, 0, 5, NULL,
  CONCAT('publisher', @badshort), '2026-06-01 11:00:00', NULL, NULL, NULL,
  '2026-06-01 11:54:00', '2026-06-01 11:54:00'),
 (5, REPEAT(X'F09F9A80', 64), REPEAT(X'F09F9880', 64), REPEAT(X'E4B8AD', 64),
  REPEAT(X'F09F9880', 64), REPEAT('S', 64), REPEAT('C', 32), NULL, NULL, '{"ok": 1}', NULL, 0, 0,
  5, NULL, NULL, NULL, NULL, NULL, NULL, '2026-06-01 11:55:00', '2026-06-01 11:55:00'),
 (18446744073709551615, 'VX-NULLS', 'ORDER', 'O-NULL', 'NULLS_EVERYWHERE', 'order-service', 'MQ',
  NULL, NULL, '', NULL, 3, 0, 5, NULL, NULL, NULL, NULL, NULL, NULL, '2026-06-01 11:56:00',
  '2026-06-01 11:56:00');

INSERT INTO hostile_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time, last_handle_time,
  fail_reason, trace_id, remark, create_time, update_time)
VALUES
 (0, CONCAT('VX-0', @badshort), CONCAT('BAD', @bad), CONCAT('BIZ', @bad), CONCAT('ID', @bad),
  CONCAT('svc', @bad),
  CONCAT('status=FAILED ', X'1B5D303B50574E454407', X'FFFE', '\nline 2 ', X'9B', '31m', @bad),
  3, 1, 3, '2026-06-01 11:59:00', '2026-06-01 11:58:00', CONCAT('fail ', @bad),
  CONCAT('trace-v', @badshort), CONCAT('remark ', @bad), '2026-06-01 11:50:00',
  '2026-06-01 11:59:00'),
 (2, 'VX-DEEP100', 'DEEP100', 'ORDER', 'O2', 'order-service',
  CONCAT(REPEAT('[', 100), '"deep"', REPEAT(']', 100)), 3, 0, 3, '2026-06-01 11:00:00', NULL,
  '100 levels', NULL, NULL, '2026-06-01 11:52:00', '2026-06-01 11:52:00'),
 (3, 'VX-1MB-LINES', 'BIG_TEXT', 'ORDER', 'O3', 'order-service',
  REPEAT(CONCAT('line ', X'1B', '[31m', X'FF', ' 中文 ', X'9B', '\n'), 50000), 1, 0, 3, NULL,
  '2026-06-01 11:00:00', '1 MB of lines', NULL, NULL, '2026-06-01 11:53:00',
  '2026-06-01 11:53:00'),
 (18446744073709551615, 'VX-NULLS', 'NULLS_EVERYWHERE', 'ORDER', 'O-NULL', 'order-service', '',
  3, 0, 3, NULL, NULL, NULL, NULL, NULL, '2026-06-01 11:56:00', '2026-06-01 11:56:00');

ANALYZE TABLE biz_outbox_event, biz_message_event, hostile_outbox_event, hostile_message_event;
