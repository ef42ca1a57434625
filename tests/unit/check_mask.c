/* core/mask: personal data masked in stored JSON and plain text — key rules (nested, in
 * arrays, CJK and escaped keys, any case), numbers and containers under a masked key,
 * duplicate keys, identifier keys, each value pattern with its near misses, precedence, the
 * text exactly as stored around what is masked, invalid JSON as text, 1 MB payloads, styles,
 * the output's bounds, counts, empty rules, copies and rule validation. */
#include <config.h>

#include "core/mask.h"
#include "core/util.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Valid resident ID numbers (province, date, check character), and bank cards. */
#define ID_X    "11010519491231002X" /* Beijing, 1949-12-31 */
#define ID_LEAP "110105200002291235" /* 2000-02-29 */
#define ID_SZ   "44030419900307123X"
#define ID_62   "620102199001010257" /* also a UnionPay-looking Luhn-valid number */
#define UNION   "6222021234567890128"
#define VISA    "4111111111111111"
#define MASTER  "5555555555554444"
#define MASTER2 "2221000000000009"
#define AMEX    "378282246310005"
#define JCB     "3530111333300000"

static struct ev_mask D; /* the defaults, fresh for each test */

static void setup(void)
{
	ev_mask_defaults(&D);
}

static void teardown(void)
{
	ev_mask_free(&D);
}

static bool is_json(const char *s, size_t len)
{
	json_error_t e;
	json_t *j = json_loadb(s, len, JSON_DECODE_ANY, &e);

	json_decref(j);
	return j != NULL;
}

/* ev_mask_json with the invariants every call must keep: the length, the bound, JSON in
 * JSON out, and masking the output again never making it longer. */
static char *mj(const struct ev_mask *m, const char *s, size_t len, size_t *nmasked)
{
	size_t outlen = 0, n = 99, again_len = 0;
	char *out = ev_mask_json(m, s, len, &outlen, &n);

	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(out[outlen], '\0');
	ck_assert_uint_le(outlen, 2 * len + 64);
	if (is_json(s, len))
		ck_assert_msg(is_json(out, outlen), "masked JSON is not JSON: %s", out);
	free(ev_mask_json(m, out, outlen, &again_len, NULL));
	ck_assert_uint_le(again_len, outlen);
	if (nmasked != NULL)
		*nmasked = n;
	return out;
}

static char *mt(const struct ev_mask *m, const char *s, size_t *nmasked)
{
	size_t len = strlen(s), outlen = 0, n = 99;
	char *out = ev_mask_text(m, s, len, &outlen, &n);

	ck_assert_uint_eq(strlen(out), outlen);
	ck_assert_uint_le(outlen, 2 * len + 64);
	if (nmasked != NULL)
		*nmasked = n;
	return out;
}

#define JSON_IS(m, in, want)                                                                       \
	do {                                                                                       \
		char *o_ = mj((m), (in), strlen(in), NULL);                                        \
		ck_assert_str_eq(o_, (want));                                                      \
		free(o_);                                                                          \
	} while (0)

#define TEXT_IS(m, in, want)                                                                       \
	do {                                                                                       \
		char *o_ = mt((m), (in), NULL);                                                    \
		ck_assert_str_eq(o_, (want));                                                      \
		free(o_);                                                                          \
	} while (0)

/* A value pattern in a JSON string and in plain text: the same masking. */
#define PATTERN_IS(in, want)                                                                       \
	do {                                                                                       \
		TEXT_IS(&D, in, want);                                                             \
		JSON_IS(&D, "{\"note\":\"" in "\"}", "{\"note\":\"" want "\"}");                   \
	} while (0)

START_TEST(key_rules_mask_their_values)
{
	JSON_IS(&D, "{\"phone\":\"13812345678\",\"name\":\"Li\"}",
	        "{\"phone\":\"138****5678\",\"name\":\"Li\"}");
	/* Not a phone number: the key alone decides. */
	JSON_IS(&D, "{\"tel\":\"021-5555-1234\"}", "{\"tel\":\"021******1234\"}");
	JSON_IS(&D, "{\"idCard\":\"" ID_X "\",\"cardNo\":\"" VISA "\"}",
	        "{\"idCard\":\"110***********002X\",\"cardNo\":\"411*********1111\"}");
	JSON_IS(&D, "{\"email\":\"alice@example.com\"}", "{\"email\":\"ali**********.com\"}");
	/* ALL hides the length. */
	JSON_IS(&D, "{\"password\":\"correct horse battery staple\",\"token\":\"x1\"}",
	        "{\"password\":\"******\",\"token\":\"******\"}");
	JSON_IS(&D, "{\"address\":\"上海市浦东新区\"}", "{\"address\":\"******\"}");
	/* Globs: the defaults' *phone*, *token*, ... */
	JSON_IS(&D, "{\"contactPhone\":\"13812345678\",\"accessToken\":\"abc\"}",
	        "{\"contactPhone\":\"138****5678\",\"accessToken\":\"******\"}");
	/* Exact names are exact: hotel is not tel. */
	JSON_IS(&D, "{\"hotel\":\"Grand Hotel Shanghai\"}", "{\"hotel\":\"Grand Hotel Shanghai\"}");
}
END_TEST

START_TEST(keys_match_in_any_case)
{
	JSON_IS(&D, "{\"PHONE\":\"13812345678\",\"Mobile\":\"13912345678\",\"EMAIL\":\"x\"}",
	        "{\"PHONE\":\"138****5678\",\"Mobile\":\"139****5678\",\"EMAIL\":\"*\"}");
	JSON_IS(&D, "{\"IDCARD\":\"abcdefgh\",\"userPassWord\":\"p\"}",
	        "{\"IDCARD\":\"abc*efgh\",\"userPassWord\":\"*\"}");
	enum ev_mask_style st = EV_MASK_ALL;
	ck_assert(ev_mask_key_matches(&D, "BankCard", &st));
	ck_assert_int_eq(st, EV_MASK_KEEP);
	ck_assert(ev_mask_key_matches(&D, "SECRET", &st));
	ck_assert_int_eq(st, EV_MASK_ALL);
	/* A key two rules match gets the stricter style. */
	ck_assert(ev_mask_key_matches(&D, "phoneToken", &st));
	ck_assert_int_eq(st, EV_MASK_ALL);
	ck_assert(!ev_mask_key_matches(&D, "hotel", &st));
	ck_assert(!ev_mask_key_matches(&D, "name", NULL));
	ck_assert(ev_mask_key_matches(&D, "tel", NULL));
	/* Identifier globs are case-sensitive. */
	ck_assert(ev_mask_key_is_ident(&D, "orderId"));
	ck_assert(ev_mask_key_is_ident(&D, "id"));
	ck_assert(ev_mask_key_is_ident(&D, "bizNo"));
	ck_assert(ev_mask_key_is_ident(&D, "order_no"));
	ck_assert(!ev_mask_key_is_ident(&D, "ORDERID"));
	ck_assert(!ev_mask_key_is_ident(&D, "note"));
}
END_TEST

START_TEST(nested_objects_and_arrays)
{
	JSON_IS(&D, "{\"user\":{\"contact\":{\"tel\":\"13812345678\",\"city\":\"SH\"}}}",
	        "{\"user\":{\"contact\":{\"tel\":\"138****5678\",\"city\":\"SH\"}}}");
	/* Strings in an array belong to the array's key. */
	JSON_IS(&D, "{\"phones\":[\"13912345678\",\"13712345678\"]}",
	        "{\"phones\":[\"139****5678\",\"137****5678\"]}");
	JSON_IS(&D, "[{\"mobile\":\"13812345678\"},{\"mobile\":\"13912345678\"}]",
	        "[{\"mobile\":\"138****5678\"},{\"mobile\":\"139****5678\"}]");
	JSON_IS(&D, "[[[{\"a\":{\"secret\":\"s3cr3t!\"}}]]]",
	        "[[[{\"a\":{\"secret\":\"******\"}}]]]");
}
END_TEST

START_TEST(cjk_and_escaped_keys)
{
	struct ev_mask m;

	ev_mask_init(&m);
	ck_assert_int_eq(ev_mask_add_key(&m, "手机", EV_MASK_KEEP, NULL), 0);
	ck_assert_int_eq(ev_mask_add_key(&m, "?号", EV_MASK_ALL, NULL), 0);
	JSON_IS(&m, "{\"手机\":\"13812345678\",\"姓名\":\"张三\"}",
	        "{\"手机\":\"138****5678\",\"姓名\":\"张三\"}");
	/* The key as decoded: escapes, a surrogate pair ('?' is one character). */
	JSON_IS(&m, "{\"\\u624b\\u673a\":\"13812345678\"}", "{\"\\u624b\\u673a\":\"138****5678\"}");
	JSON_IS(&m, "{\"证号\":\"A1\",\"\\ud83d\\ude00号\":\"B2\",\"长证号\":\"C3\"}",
	        "{\"证号\":\"******\",\"\\ud83d\\ude00号\":\"******\",\"长证号\":\"C3\"}");
	ev_mask_free(&m);
	JSON_IS(&D, "{\"pho\\u006ee\":\"abcdefghij\"}", "{\"pho\\u006ee\":\"abc***ghij\"}");
	JSON_IS(&D, "{\"\\u0050assword\":\"hunter2\",\"e\\/mail\":\"y\"}",
	        "{\"\\u0050assword\":\"******\",\"e\\/mail\":\"y\"}");
	JSON_IS(&D, "{\"to\\ken\":\"x\"}", "{\"to\\ken\":\"x\"}"); /* not JSON: \k */
}
END_TEST

START_TEST(numbers_under_a_masked_key_become_strings)
{
	JSON_IS(&D, "{\"phone\":13812345678}", "{\"phone\":\"138****5678\"}");
	JSON_IS(&D, "{\"mobile\":-1.5e10}", "{\"mobile\":\"*******\"}");
	JSON_IS(&D, "{\"cardNo\":4111111111111111.00}", "{\"cardNo\":\"411************1.00\"}");
	JSON_IS(&D, "{\"password\":123456}", "{\"password\":\"******\"}");
	/* Literals stay. */
	JSON_IS(&D, "{\"phone\":true,\"token\":null,\"secret\":false}",
	        "{\"phone\":true,\"token\":null,\"secret\":false}");
	/* Numbers elsewhere are never pattern-masked: ids and amounts. */
	JSON_IS(&D, "{\"n\":13812345678,\"amount\":" ID_LEAP "}",
	        "{\"n\":13812345678,\"amount\":" ID_LEAP "}");
}
END_TEST

START_TEST(containers_under_a_masked_key)
{
	JSON_IS(&D, "{\"secret\":{\"a\":\"xyz\",\"b\":[1234,\"longer string\",{\"c\":true}]}}",
	        "{\"secret\":{\"a\":\"******\",\"b\":[\"******\",\"******\",{\"c\":true}]}}");
	JSON_IS(&D, "{\"phone\":[\"13812345678\",13912345678,{\"home\":\"02155551234\"}]}",
	        "{\"phone\":[\"138****5678\",\"139****5678\",{\"home\":\"021****1234\"}]}");
	/* A deeper key rule can only make it stricter. */
	JSON_IS(&D, "{\"phone\":{\"password\":\"abcdefghij\",\"x\":\"abcdefghij\"}}",
	        "{\"phone\":{\"password\":\"******\",\"x\":\"abc***ghij\"}}");
	JSON_IS(&D, "{\"password\":{\"phone\":\"13812345678\",\"userId\":\"abcdefghij\"}}",
	        "{\"password\":{\"phone\":\"******\",\"userId\":\"******\"}}");
	JSON_IS(&D, "{\"token\":{},\"secret\":[]}", "{\"token\":{},\"secret\":[]}");
}
END_TEST

START_TEST(duplicate_keys_are_all_masked)
{
	size_t n;
	const char *in = "{\"phone\":\"13812345678\",\"x\":1,\"phone\":\"13912345678\"}";
	char *o = mj(&D, in, strlen(in), &n);

	ck_assert_str_eq(o, "{\"phone\":\"138****5678\",\"x\":1,\"phone\":\"139****5678\"}");
	ck_assert_uint_eq(n, 2);
	free(o);
}
END_TEST

START_TEST(identifier_keys_stay_clear)
{
	JSON_IS(&D, "{\"orderId\":\"" ID_LEAP "\",\"userId\":\"" ID_X "\"}",
	        "{\"orderId\":\"" ID_LEAP "\",\"userId\":\"" ID_X "\"}");
	JSON_IS(&D, "{\"id\":\"13812345678\",\"bizNo\":\"" VISA "\",\"trade_no\":\"" UNION "\"}",
	        "{\"id\":\"13812345678\",\"bizNo\":\"" VISA "\",\"trade_no\":\"" UNION "\"}");
	/* The same values elsewhere are patterns. */
	JSON_IS(&D, "{\"note\":\"" ID_X "\",\"ORDERID\":\"13812345678\"}",
	        "{\"note\":\"110***********002X\",\"ORDERID\":\"138****5678\"}");
	/* Under an identifier: no patterns, but key rules still apply. */
	JSON_IS(&D,
	        "{\"userId\":{\"phone\":\"13812345678\",\"note\":\"13912345678\","
	        "\"list\":[\"13712345678\"]}}",
	        "{\"userId\":{\"phone\":\"138****5678\",\"note\":\"13912345678\","
	        "\"list\":[\"13712345678\"]}}");
	/* A key rule beats an identifier glob: idNo, cardNo. */
	JSON_IS(&D, "{\"idNo\":\"" ID_X "\"}", "{\"idNo\":\"110***********002X\"}");
	/* Numbers under an identifier key stay numbers. */
	JSON_IS(&D, "{\"orderId\":1790123456789012345}", "{\"orderId\":1790123456789012345}");
}
END_TEST

START_TEST(mobile_numbers)
{
	PATTERN_IS("13812345678", "138****5678");
	PATTERN_IS("call 19912345678 now", "call 199****5678 now");
	PATTERN_IS("+86 13812345678", "+86 138****5678");
	PATTERN_IS("+86-13812345678", "+86-138****5678");
	PATTERN_IS("+8613812345678", "+86138****5678");
	PATTERN_IS("8613812345678", "86138****5678");
	PATTERN_IS("tel:13812345678;", "tel:138****5678;");
	PATTERN_IS("abc13812345678xyz", "abc138****5678xyz");
	PATTERN_IS("13812345678,13912345678", "138****5678,139****5678");
	/* Near misses: 1[3-9], 11 digits exactly, no digit next to it. */
	PATTERN_IS("12812345678", "12812345678");
	PATTERN_IS("10812345678", "10812345678");
	PATTERN_IS("1381234567", "1381234567");
	PATTERN_IS("138123456789", "138123456789");
	PATTERN_IS("013812345678", "013812345678");
	PATTERN_IS("8713812345678", "8713812345678");
	PATTERN_IS("1.3812345678", "1.3812345678");
}
END_TEST

START_TEST(resident_id_numbers)
{
	PATTERN_IS(ID_X, "110***********002X");
	PATTERN_IS("11010519491231002x", "110***********002x");
	PATTERN_IS(ID_LEAP, "110***********1235");
	PATTERN_IS("身份证" ID_SZ "。", "身份证440***********123X。");
	PATTERN_IS("id:" ID_X ",", "id:110***********002X,");
	/* Near misses: the check character, the date, the province, the boundaries. */
	PATTERN_IS("110105194912310021", "110105194912310021");   /* check is X */
	PATTERN_IS("110105190002291239", "110105190002291239");   /* 1900 is not leap */
	PATTERN_IS("110105194913310021", "110105194913310021");   /* month 13 */
	PATTERN_IS("110105194902300020", "110105194902300020");   /* 30 February */
	PATTERN_IS("110105189912310023", "110105189912310023");   /* 1899 */
	PATTERN_IS("990105194912310023", "990105194912310023");   /* province 99 */
	PATTERN_IS("A" ID_X, "A" ID_X);                           /* a letter before */
	PATTERN_IS(ID_X "Y", ID_X "Y");                           /* a letter after */
	PATTERN_IS("0" ID_LEAP, "0" ID_LEAP);                     /* a digit before */
	PATTERN_IS("17901234567890123", "17901234567890123");     /* 17 digits */
	PATTERN_IS("179012345678901234", "179012345678901234");   /* a snowflake id */
	PATTERN_IS("1790123456789012345", "1790123456789012345"); /* 19 digits */
}
END_TEST

START_TEST(bank_cards)
{
	PATTERN_IS(UNION, "622************0128");
	PATTERN_IS("card " VISA " ok", "card 411*********1111 ok");
	PATTERN_IS(MASTER, "555*********4444");
	PATTERN_IS(MASTER2, "222*********0009");
	PATTERN_IS(AMEX, "378********0005");
	PATTERN_IS(JCB, "353*********0000");
	PATTERN_IS("x" VISA "y", "x411*********1111y"); /* letters may touch it */
	/* Near misses: Luhn, prefix, length, digits next to it. */
	PATTERN_IS("4111111111111112", "4111111111111112");
	PATTERN_IS("91111111111111118", "91111111111111118"); /* Luhn-valid, unknown prefix */
	PATTERN_IS("2220000000000000", "2220000000000000");
	PATTERN_IS("0" VISA, "0" VISA);
	PATTERN_IS(VISA "1", VISA "1");
	PATTERN_IS("411111111111", "411111111111"); /* 12 digits */
	PATTERN_IS("4111 1111 1111 1111", "4111 1111 1111 1111");
}
END_TEST

START_TEST(email_addresses)
{
	PATTERN_IS("alice@example.com", "a***@example.com");
	PATTERN_IS("mail bob.smith+tag@mail.example.co.uk, thanks",
	           "mail b***@mail.example.co.uk, thanks");
	PATTERN_IS("<x@ab.cn>", "<x***@ab.cn>");
	PATTERN_IS("alice@example.com.", "a***@example.com.");
	PATTERN_IS("邮箱alice@example.com。", "邮箱a***@example.com。");
	PATTERN_IS("a@b.c1.org9", "a@b.c1.org9");
	PATTERN_IS("a@b.c1.org", "a***@b.c1.org");
	/* Near misses: no dot, a one-letter or numeric TLD, no local part. */
	PATTERN_IS("root@localhost", "root@localhost");
	PATTERN_IS("x@y.z", "x@y.z");
	PATTERN_IS("a@b.123", "a@b.123");
	PATTERN_IS("@example.com", "@example.com");
	PATTERN_IS("a@.com", "a@.com");
	PATTERN_IS("a@b..com", "a@b..com");
	/* Masked twice is masked once. */
	PATTERN_IS("a***@example.com", "a***@example.com");
}
END_TEST

START_TEST(precedence_masks_each_character_once)
{
	size_t n;
	char *o;

	/* An ID number that is also a Luhn-valid 62... number: one match. */
	o = mt(&D, ID_62, &n);
	ck_assert_str_eq(o, "620***********0257");
	ck_assert_uint_eq(n, 1);
	free(o);
	/* A mobile number as the local part: the mobile number wins. */
	o = mt(&D, "13812345678@163.com", &n);
	ck_assert_str_eq(o, "138****5678@163.com");
	ck_assert_uint_eq(n, 1);
	free(o);
	o = mt(&D, ID_X " " VISA " 13812345678 a@b.cn", &n);
	ck_assert_str_eq(o, "110***********002X 411*********1111 138****5678 a***@b.cn");
	ck_assert_uint_eq(n, 4);
	free(o);
}
END_TEST

START_TEST(patterns_can_be_turned_off)
{
	struct ev_mask m;

	ev_mask_copy(&m, &D);
	m.patterns = EV_MASK_P_EMAIL;
	TEXT_IS(&m, "13812345678 " ID_X " " VISA " a@b.cn",
	        "13812345678 " ID_X " " VISA " a***@b.cn");
	m.patterns = EV_MASK_P_MOBILE | EV_MASK_P_BANKCARD;
	TEXT_IS(&m, "13812345678 " ID_X " " VISA " a@b.cn",
	        "138****5678 " ID_X " 411*********1111 a@b.cn");
	m.patterns = 0;
	JSON_IS(&m, "{\"note\":\"13812345678\",\"phone\":\"13812345678\"}",
	        "{\"note\":\"13812345678\",\"phone\":\"138****5678\"}");
	ev_mask_free(&m);
}
END_TEST

START_TEST(plain_text)
{
	size_t n;
	char *o = mt(&D, "call 13812345678 now", &n);

	ck_assert_str_eq(o, "call 138****5678 now");
	ck_assert_uint_eq(n, 1);
	free(o);
	TEXT_IS(&D, "请联系手机13812345678，邮箱alice@example.com，谢谢",
	        "请联系手机138****5678，邮箱a***@example.com，谢谢");
	TEXT_IS(&D, "order 179012345678901234 failed: timeout",
	        "order 179012345678901234 failed: timeout");
	TEXT_IS(&D, "", "");
	/* Text is never JSON to ev_mask_text: key rules do not apply. */
	TEXT_IS(&D, "{\"password\":\"hunter2\"}", "{\"password\":\"hunter2\"}");
	/* NUL bytes and invalid UTF-8 pass through. */
	size_t len;
	o = ev_mask_text(&D,
	                 "a\0"
	                 "13812345678\xff",
	                 14, &len, &n);
	ck_assert_uint_eq(len, 14);
	ck_assert_mem_eq(o,
	                 "a\0"
	                 "138****5678\xff",
	                 14);
	ck_assert_uint_eq(n, 1);
	free(o);
}
END_TEST

START_TEST(the_text_stays_as_stored)
{
	/* Whitespace, number formats, key order, escapes outside masked values: byte for byte. */
	const char *in = " {\n\t\"total\" : 199.00 ,\"z\":1e-7,\"a\":-0,\r\n"
	                 "  \"phone\" :\t\"13812345678\" , \"s\":\"\\u4e2d\\n\\\"x\\\"\","
	                 "\"big\":18446744073709551616 } \n";
	const char *want = " {\n\t\"total\" : 199.00 ,\"z\":1e-7,\"a\":-0,\r\n"
	                   "  \"phone\" :\t\"138****5678\" , \"s\":\"\\u4e2d\\n\\\"x\\\"\","
	                   "\"big\":18446744073709551616 } \n";
	JSON_IS(&D, in, want);
	/* Escapes in the kept part are kept as stored; the hidden ones become '*'. */
	JSON_IS(&D, "{\"phone\":\"\\u0031\\u00338\\n1234\\u00355678\"}",
	        "{\"phone\":\"\\u0031\\u00338******5678\"}");
	JSON_IS(&D, "{\"note\":\"\\u0031\\u003312345678\\u0038\"}",
	        "{\"note\":\"\\u0031\\u00331****678\\u0038\"}");
	/* Characters, not bytes: CJK, a surrogate pair, invalid UTF-8. */
	JSON_IS(&D, "{\"address\":\"Room 1\",\"email\":\"张三丰李四王五赵六\"}",
	        "{\"address\":\"******\",\"email\":\"张三丰**王五赵六\"}");
	JSON_IS(&D, "{\"email\":\"\\ud83d\\ude00\\ud83d\\ude00abcde\\ud83d\\ude00\"}",
	        "{\"email\":\"\\ud83d\\ude00\\ud83d\\ude00a*cde\\ud83d\\ude00\"}");
	JSON_IS(&D, "{\"email\":\"😀😀abcde😀\"}", "{\"email\":\"😀😀a*cde😀\"}");
	size_t len;
	const char *bad = "{\"tel\":\"\xff\xfe"
	                  "1234567\xe4\xb8\"}";
	char *o = ev_mask_json(&D, bad, strlen(bad), &len, NULL);
	ck_assert_str_eq(o, "{\"tel\":\"\xff\xfe"
	                    "1****67\xe4\xb8\"}");
	free(o);
}
END_TEST

START_TEST(invalid_json_is_masked_as_text)
{
	size_t n, len;
	char *o;

	/* Truncated: the key rule is gone, the mobile pattern still applies. */
	JSON_IS(&D, "{\"phone\":\"13812345678\"", "{\"phone\":\"138****5678\"");
	JSON_IS(&D, "{\"password\":\"hunter2\",}", "{\"password\":\"hunter2\",}");
	JSON_IS(&D, "{\"phone\":13812345678", "{\"phone\":138****5678");
	JSON_IS(&D, "{\"phone\":\"x\"} trailing 13812345678",
	        "{\"phone\":\"x\"} trailing 138****5678");
	JSON_IS(&D, "{\"phone\":01}", "{\"phone\":01}");
	JSON_IS(&D, "{'phone':'abcdefghij'}", "{'phone':'abcdefghij'}");
	JSON_IS(&D, "{\"phone\":\"a\tb\"}", "{\"phone\":\"a\tb\"}"); /* a raw control */
	JSON_IS(&D, "{\"phone\":\"\\u12G4\"}", "{\"phone\":\"\\u12G4\"}");
	JSON_IS(&D, "", "");
	JSON_IS(&D, "   ", "   ");
	/* A NUL byte is not JSON. */
	o = ev_mask_json(&D, "{\"phone\":\"13812345678\"}\0", 24, &len, &n);
	ck_assert_uint_eq(len, 24);
	ck_assert_mem_eq(o, "{\"phone\":\"138****5678\"}\0", 24);
	free(o);
	o = ev_mask_json(&D, "{\"phone\":\"abcdefghij\"}\0", 23, &len, &n);
	ck_assert_mem_eq(o, "{\"phone\":\"abcdefghij\"}\0", 23);
	ck_assert_uint_eq(n, 0);
	free(o);
	/* 512 levels are JSON, 513 are not. */
	struct ev_buf b;
	for (int depth = 512; depth <= 513; depth++) {
		ev_buf_init(&b);
		for (int i = 0; i < depth - 1; i++)
			ev_buf_adds(&b, "[");
		ev_buf_adds(&b, "{\"token\":\"abcdefghij\"}");
		for (int i = 0; i < depth - 1; i++)
			ev_buf_adds(&b, "]");
		o = mj(&D, b.data, b.len, &n);
		ck_assert_uint_eq(n, depth == 512 ? 1 : 0);
		ck_assert((strstr(o, "abcdefghij") == NULL) == (depth == 512));
		free(o);
		ev_buf_free(&b);
	}
	/* 100,000 levels: text, and nothing recursed. */
	ev_buf_init(&b);
	for (int i = 0; i < 100000; i++)
		ev_buf_adds(&b, "{\"a\":");
	o = mj(&D, b.data, b.len, &n);
	ck_assert_uint_eq(strlen(o), b.len);
	free(o);
	ev_buf_free(&b);
}
END_TEST

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

START_TEST(one_megabyte_payloads)
{
	struct ev_buf b, want;
	struct timespec t0;
	size_t items = 0, n, len;
	char *o;

	ev_buf_init(&b);
	ev_buf_init(&want);
	ev_buf_adds(&b, "{\"orderNo\":\"SO-1\",\"items\":[");
	ev_buf_adds(&want, "{\"orderNo\":\"SO-1\",\"items\":[");
	while (b.len < 1024 * 1024) {
		const char *sep = items ? "," : "";
		ev_buf_printf(&b,
		              "%s{\"n\":%zu,\"phone\":\"139%08zu\",\"note\":\"call 138%08zu\","
		              "\"price\":%zu.00}",
		              sep, items, items, items, items % 1000);
		ev_buf_printf(
		        &want,
		        "%s{\"n\":%zu,\"phone\":\"139****%04zu\",\"note\":\"call 138****%04zu\","
		        "\"price\":%zu.00}",
		        sep, items, items % 10000, items % 10000, items % 1000);
		items++;
	}
	ev_buf_adds(&b, "],\"tail\":\"end\"}");
	ev_buf_adds(&want, "],\"tail\":\"end\"}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	o = mj(&D, b.data, b.len, &n);
	printf("check_mask: %zu-byte payload masked in %.1f ms\n", b.len, ms_since(&t0));
	ck_assert_uint_eq(n, 2 * items);
	ck_assert_str_eq(o, want.data);
	free(o);

	/* One string of 1 MB: digits everywhere, no pattern; then under a key rule. */
	ev_buf_free(&b);
	ev_buf_adds(&b, "{\"note\":\"");
	for (size_t i = 0; b.len < 1024 * 1024; i++)
		ev_buf_printf(&b, "%s%zu@", i % 7 ? "" : "\\u0041", i * 7919);
	ev_buf_adds(&b, "\",\"secret\":\"");
	for (size_t i = 0; i < 100000; i++)
		ev_buf_adds(&b, "abc\\n\xe4\xb8\xad");
	ev_buf_adds(&b, "\"}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	o = mj(&D, b.data, b.len, &n);
	printf("check_mask: one 1 MB string masked in %.1f ms\n", ms_since(&t0));
	len = strlen(o);
	ck_assert_str_eq(o + len - 9, "\"******\"}");
	ck_assert_uint_eq(n, 1);
	free(o);

	/* 1 MB of plain text with a pattern every few bytes. */
	ev_buf_free(&b);
	for (size_t i = 0; b.len < 1024 * 1024; i++)
		ev_buf_printf(&b, "x 138%08zu y%zu@ex.com ", i, i);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	o = mt(&D, b.data, &n);
	printf("check_mask: 1 MB of text masked in %.1f ms\n", ms_since(&t0));
	ck_assert_str_eq(o + strlen(o) - 1, " ");
	free(o);
	ev_buf_free(&b);
	ev_buf_free(&want);
}
END_TEST

START_TEST(styles)
{
	struct ev_mask m;

	/* KEEP: 8 characters and more keep 3 + 4; fewer are all hidden. */
	JSON_IS(&D, "{\"phone\":\"abcdefgh\",\"tel\":\"abcdefg\",\"mobile\":\"\"}",
	        "{\"phone\":\"abc*efgh\",\"tel\":\"*******\",\"mobile\":\"\"}");
	ev_mask_init(&m);
	ck_assert_int_eq(ev_mask_add_key(&m, "k", EV_MASK_KEEP, NULL), 0);
	ck_assert_int_eq(ev_mask_add_key(&m, "a", EV_MASK_ALL, NULL), 0);
	JSON_IS(&m, "{\"k\":\"abcdefgh\",\"k\":\"abcdefg\",\"k\":\"\",\"k\":\"中文\"}",
	        "{\"k\":\"abc*efgh\",\"k\":\"*******\",\"k\":\"\",\"k\":\"**\"}");
	/* ALL: six stars whatever the length; "" stays, one stored byte or up to 3 digits
	 * become one star. */
	JSON_IS(&m, "{\"a\":\"abcdefghijklmnop\",\"a\":\"ab\",\"a\":\"a\",\"a\":\"\"}",
	        "{\"a\":\"******\",\"a\":\"******\",\"a\":\"*\",\"a\":\"\"}");
	JSON_IS(&m, "{\"a\":\"中\",\"a\":\"\\n\",\"a\":\"\\u0041\"}",
	        "{\"a\":\"******\",\"a\":\"******\",\"a\":\"******\"}");
	JSON_IS(&m, "{\"a\":1234,\"a\":123,\"a\":12,\"a\":1,\"a\":-0.5}",
	        "{\"a\":\"******\",\"a\":\"*\",\"a\":\"*\",\"a\":\"*\",\"a\":\"******\"}");
	JSON_IS(&m, "{\"k\":1,\"k\":12345678}", "{\"k\":\"*\",\"k\":\"123*5678\"}");
	/* The patterns' style. */
	m.patterns = EV_MASK_P_ALL;
	m.pattern_style = EV_MASK_ALL;
	TEXT_IS(&m, "13812345678 +86 13912345678 " ID_X " " VISA " alice@example.com",
	        "****** +86 ****** ****** ****** ******");
	ev_mask_free(&m);
	enum ev_mask_style st = EV_MASK_KEEP;
	ck_assert_int_eq(ev_mask_style_parse("ALL", &st), 0);
	ck_assert_int_eq(st, EV_MASK_ALL);
	ck_assert_int_eq(ev_mask_style_parse("keep", &st), 0);
	ck_assert_int_eq(st, EV_MASK_KEEP);
	ck_assert_int_eq(ev_mask_style_parse("none", &st), -1);
	ck_assert_int_eq(ev_mask_style_parse("", &st), -1);
	ck_assert_int_eq(ev_mask_style_parse("keeps", &st), -1);
	ck_assert_int_eq(st, EV_MASK_KEEP);
	ck_assert_str_eq(ev_mask_style_name(EV_MASK_ALL), "all");
	ck_assert_str_eq(ev_mask_style_name(EV_MASK_KEEP), "keep");
}
END_TEST

START_TEST(output_bounds)
{
	static const char *const small[] = {"\"\"", "1", "\"a\"", "12", "-0", "\"\\n\""};
	struct ev_buf b;

	for (size_t k = 0; k < sizeof(small) / sizeof(small[0]); k++) {
		/* Thousands of the smallest values under an ALL key: under twice the input. */
		ev_buf_init(&b);
		ev_buf_adds(&b, "{\"password\":[");
		for (int i = 0; i < 5000; i++)
			ev_buf_printf(&b, "%s%s", i ? "," : "", small[k]);
		ev_buf_adds(&b, "],\"token\":{");
		for (int i = 0; i < 5000; i++)
			ev_buf_printf(&b, "%s\"\":%s", i ? "," : "", small[k]);
		ev_buf_adds(&b, "}}");
		size_t n, len;
		char *o = mj(&D, b.data, b.len, &n);
		len = strlen(o);
		ck_assert_uint_le(len, 2 * b.len);
		ck_assert_uint_eq(n, 10000);
		free(o);
		ev_buf_free(&b);
	}
	/* Short e-mail addresses grow by at most their own length. */
	TEXT_IS(&D, "a@b.cn,a@b.cn", "a***@b.cn,a***@b.cn");
}
END_TEST

START_TEST(counts)
{
	size_t n;
	const char *in = "{\"phone\":[\"13812345678\",1,true],\"note\":\"13912345678 and a@b.cn\","
	                 "\"orderId\":\"13712345678\",\"x\":13612345678}";
	char *o = mj(&D, in, strlen(in), &n);

	ck_assert_uint_eq(n, 4);
	free(o);
	o = mj(&D, "{\"note\":\"nothing here\"}", 23, &n);
	ck_assert_uint_eq(n, 0);
	free(o);
	/* NULL is fine for the count. */
	size_t len;
	free(ev_mask_json(&D, "{}", 2, &len, NULL));
	free(ev_mask_text(&D, "13812345678", 11, &len, NULL));
}
END_TEST

START_TEST(empty_rules_mask_nothing)
{
	static const char *const inputs[] = {
	        "{\"phone\":\"13812345678\",\"password\":\"x\"}",
	        "13812345678 " ID_X " " VISA " a@b.cn",
	        "[\"" ID_X "\", 13812345678]",
	        "{\"phone\":",
	        "",
	};
	struct ev_mask m;

	ev_mask_init(&m);
	for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
		size_t n = 99, len;
		char *o = ev_mask_json(&m, inputs[k], strlen(inputs[k]), &len, &n);

		ck_assert_str_eq(o, inputs[k]);
		ck_assert_uint_eq(len, strlen(inputs[k]));
		ck_assert_uint_eq(n, 0);
		free(o);
		o = ev_mask_text(&m, inputs[k], strlen(inputs[k]), &len, &n);
		ck_assert_str_eq(o, inputs[k]);
		ck_assert_uint_eq(n, 0);
		free(o);
	}
	/* Identifier globs alone mask nothing either. */
	ck_assert_int_eq(ev_mask_add_ident(&m, "*", NULL), 0);
	JSON_IS(&m, inputs[0], inputs[0]);
	ev_mask_free(&m);
	ck_assert_uint_eq(m.nkeys + m.nident + m.patterns, 0);
	/* Cleared lists. */
	ev_mask_copy(&m, &D);
	ev_mask_clear_keys(&m);
	ev_mask_clear_ident(&m);
	ck_assert_uint_eq(m.nkeys + m.nident, 0);
	JSON_IS(&m, "{\"password\":\"x\",\"orderId\":\"13812345678\"}",
	        "{\"password\":\"x\",\"orderId\":\"138****5678\"}");
	ev_mask_free(&m);
}
END_TEST

START_TEST(copies_are_deep)
{
	struct ev_mask a, b;

	ev_mask_init(&a);
	ck_assert_int_eq(ev_mask_add_key(&a, "card*", EV_MASK_ALL, NULL), 0);
	ck_assert_int_eq(ev_mask_add_ident(&a, "*Ref", NULL), 0);
	a.patterns = EV_MASK_P_MOBILE;
	a.pattern_style = EV_MASK_ALL;
	ev_mask_copy(&b, &a);
	ck_assert_ptr_ne(b.keys[0].glob, a.keys[0].glob);
	ck_assert_ptr_ne(b.ident[0], a.ident[0]);
	ev_mask_free(&a);
	ck_assert_uint_eq(b.nkeys, 1);
	ck_assert_str_eq(b.keys[0].glob, "card*");
	ck_assert_int_eq(b.keys[0].style, EV_MASK_ALL);
	ck_assert_str_eq(b.ident[0], "*Ref");
	ck_assert_uint_eq(b.patterns, EV_MASK_P_MOBILE);
	ck_assert_int_eq(b.pattern_style, EV_MASK_ALL);
	JSON_IS(&b, "{\"cardHolder\":\"Li\",\"note\":\"13812345678\",\"payRef\":\"13812345678\"}",
	        "{\"cardHolder\":\"******\",\"note\":\"******\",\"payRef\":\"13812345678\"}");
	ev_mask_free(&b);
	/* A copy of the defaults masks as they do. */
	ev_mask_copy(&b, &D);
	ck_assert_uint_eq(b.nkeys, D.nkeys);
	ck_assert_uint_eq(b.nident, D.nident);
	JSON_IS(&b, "{\"phone\":\"13812345678\"}", "{\"phone\":\"138****5678\"}");
	ev_mask_free(&b);
}
END_TEST

START_TEST(globs_are_validated)
{
	struct ev_mask m;
	struct ev_error err;
	char buf[300];

	ev_mask_init(&m);
	ev_error_clear(&err);
	ck_assert_int_eq(ev_mask_add_key(&m, "", EV_MASK_KEEP, &err), -1);
	ck_assert_int_eq(err.code, EV_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
	memset(buf, 'a', 65);
	buf[65] = '\0';
	ck_assert_int_eq(ev_mask_add_key(&m, buf, EV_MASK_KEEP, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "65 characters"));
	buf[64] = '\0';
	ck_assert_int_eq(ev_mask_add_key(&m, buf, EV_MASK_KEEP, &err), 0);
	/* 64 characters of CJK are 192 bytes: fine. */
	buf[0] = '\0';
	for (int i = 0; i < 64; i++)
		strcat(buf, "手");
	ck_assert_int_eq(ev_mask_add_ident(&m, buf, &err), 0);
	strcat(buf, "手");
	ck_assert_int_eq(ev_mask_add_ident(&m, buf, &err), -1);
	ck_assert_int_eq(ev_mask_add_key(&m, "ph\x1bone", EV_MASK_KEEP, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "control"));
	ck_assert_int_eq(ev_mask_add_key(&m, "ph\x7f", EV_MASK_KEEP, &err), -1);
	ck_assert_int_eq(ev_mask_add_key(&m, "ph\xc2\x9b", EV_MASK_KEEP, &err), -1);
	ck_assert_int_eq(ev_mask_add_key(&m, "ph\xff", EV_MASK_KEEP, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "UTF-8"));
	ck_assert_int_eq(ev_mask_add_ident(&m, "\xe4\xb8", NULL), -1);
	ck_assert_uint_eq(m.nkeys, 1);
	ck_assert_uint_eq(m.nident, 1);
	/* Globs: '*' any run, '?' one character. */
	ev_mask_clear_keys(&m);
	ck_assert_int_eq(ev_mask_add_key(&m, "a?c*", EV_MASK_KEEP, NULL), 0);
	ck_assert_int_eq(ev_mask_add_key(&m, "*x*y*z", EV_MASK_KEEP, NULL), 0);
	ck_assert(ev_mask_key_matches(&m, "abc", NULL));
	ck_assert(ev_mask_key_matches(&m, "A中cdef", NULL));
	ck_assert(!ev_mask_key_matches(&m, "ac", NULL));
	ck_assert(ev_mask_key_matches(&m, "..x..y..xz", NULL));
	ck_assert(ev_mask_key_matches(&m, "XYZ", NULL));
	ck_assert(!ev_mask_key_matches(&m, "xzy", NULL));
	ck_assert(!ev_mask_key_matches(&m, "", NULL));
	ev_mask_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mask");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, key_rules_mask_their_values);
	tcase_add_test(tc, keys_match_in_any_case);
	tcase_add_test(tc, nested_objects_and_arrays);
	tcase_add_test(tc, cjk_and_escaped_keys);
	tcase_add_test(tc, numbers_under_a_masked_key_become_strings);
	tcase_add_test(tc, containers_under_a_masked_key);
	tcase_add_test(tc, duplicate_keys_are_all_masked);
	tcase_add_test(tc, identifier_keys_stay_clear);
	tcase_add_test(tc, mobile_numbers);
	tcase_add_test(tc, resident_id_numbers);
	tcase_add_test(tc, bank_cards);
	tcase_add_test(tc, email_addresses);
	tcase_add_test(tc, precedence_masks_each_character_once);
	tcase_add_test(tc, patterns_can_be_turned_off);
	tcase_add_test(tc, plain_text);
	tcase_add_test(tc, the_text_stays_as_stored);
	tcase_add_test(tc, invalid_json_is_masked_as_text);
	tcase_add_test(tc, one_megabyte_payloads);
	tcase_add_test(tc, styles);
	tcase_add_test(tc, output_bounds);
	tcase_add_test(tc, counts);
	tcase_add_test(tc, empty_rules_mask_nothing);
	tcase_add_test(tc, copies_are_deep);
	tcase_add_test(tc, globs_are_validated);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
