/* evtop — masking personal data in payloads and text (China's PIPL): phone numbers, resident
 * ID numbers, bank cards, e-mail addresses, passwords and tokens are hidden on the screen and
 * in evtop's outputs by default.
 *
 * The stored text is never changed, and masking works on it exactly as stored: only the
 * characters of a masked value change; whitespace, key order, number formats (199.00, 1e-7),
 * duplicate keys and the escapes of what stays visible are kept byte for byte. Two things
 * decide what is masked:
 *
 *   - key rules: a member whose key (decoded, ASCII letters compared case-insensitively)
 *     matches a rule's glob has its whole value masked in the rule's style — a string's
 *     characters, a number as a masked JSON string (13812345678 -> "138****5678", so the
 *     output stays JSON), every string and number inside an object or array (keys kept; a
 *     deeper key rule can only make the style stricter); true, false and null stay. A key
 *     that several rules match gets the stricter style;
 *   - value patterns, in the other strings (never in numbers, which are ids and amounts) and
 *     in plain text: mainland mobile numbers, 18-character resident ID numbers (province,
 *     date and check character verified), bank cards (known prefix and Luhn) and e-mail
 *     addresses. A member whose key matches an identifier glob ("orderId") is never
 *     pattern-masked, nor is anything under it; key rules still apply under it.
 *
 * Styles: KEEP shows the first 3 and the last 4 characters (code points) of a value of 8 or
 * more, one '*' per hidden character, and hides a shorter value entirely; ALL writes "******"
 * whatever the length, except that an empty string stays empty and a string of one stored
 * byte or a number of 1 to 3 characters becomes "*" (so that the output never grows past
 * twice the input, and masking it again changes nothing). A pattern match is masked the same
 * way, except an e-mail address, which keeps its first character and its domain
 * (a***@example.com); the prefix of a mobile number (+86, 86) stays.
 *
 * A string whose stored text has escapes is masked as decoded: what stays visible is copied as
 * stored (a kept "\u4e2d" stays those six bytes), each hidden character, escaped or not,
 * becomes one '*'.
 *
 * Output is at most 2 * len + 64 bytes (in fact 2 * len), valid UTF-8 wherever the input
 * was, and valid JSON when the input was: the bytes around the masked characters are the
 * input's. Time and memory are linear in the input; nothing recurses. Pure: the rules may be
 * shared by threads that only read them. */
#ifndef EV_CORE_MASK_H
#define EV_CORE_MASK_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

/* Deeper JSON than this is masked as plain text. */
#define EV_MASK_MAX_DEPTH 512
/* The longest glob, in characters. */
#define EV_MASK_GLOB_MAX 64

enum ev_mask_style {
	EV_MASK_KEEP, /* first 3 and last 4 characters kept */
	EV_MASK_ALL,  /* "******" */
};

/* The value patterns, as bits of ev_mask.patterns. */
enum {
	EV_MASK_P_MOBILE = 1,
	EV_MASK_P_IDCARD = 2,
	EV_MASK_P_BANKCARD = 4,
	EV_MASK_P_EMAIL = 8,
	EV_MASK_P_ALL = 15,
};

struct ev_mask_rule {
	char *glob; /* '*' any run, '?' one character; ASCII letters case-insensitive */
	enum ev_mask_style style;
};

struct ev_mask {
	struct ev_mask_rule *keys; /* keys whose values are masked */
	size_t nkeys;
	char **ident; /* keys naming an identifier: case-sensitive globs */
	size_t nident;
	unsigned patterns;                /* EV_MASK_P_* bits of the patterns on */
	enum ev_mask_style pattern_style; /* how a pattern match is masked */
};

/* The defaults: the key rules phone, mobile, tel, telNo, tel_no, idCard, id_card, idNo, bankCard,
 * cardNo, email, *phone*, *mobile*, *email* (KEEP) and password, token, secret, address,
 * *password*, *token*, *secret* (ALL); the identifier globs *id, *Id, *No, *_no; every pattern on,
 * in the KEEP style. Any previous content of m is not freed. */
void ev_mask_defaults(struct ev_mask *m);

/* No rule and no pattern: nothing is masked. Any previous content of m is not freed. */
void ev_mask_init(struct ev_mask *m);

/* Free the rules and leave m as ev_mask_init does. */
void ev_mask_free(struct ev_mask *m);

/* Add a key rule or an identifier glob. The glob is 1 to EV_MASK_GLOB_MAX characters of valid
 * UTF-8 with no control character; otherwise -1 with err (EV_ERR_USAGE, when not NULL) saying
 * why, and m unchanged. */
int ev_mask_add_key(struct ev_mask *m, const char *glob, enum ev_mask_style style,
                    struct ev_error *err);
int ev_mask_add_ident(struct ev_mask *m, const char *glob, struct ev_error *err);

/* Remove every key rule, or every identifier glob (before a config's own list replaces the
 * defaults). */
void ev_mask_clear_keys(struct ev_mask *m);
void ev_mask_clear_ident(struct ev_mask *m);

/* "keep" or "all" (ASCII case-insensitive) into *out; otherwise -1 and *out unchanged. */
int ev_mask_style_parse(const char *s, enum ev_mask_style *out);

/* The name ev_mask_style_parse reads: "keep" or "all". */
const char *ev_mask_style_name(enum ev_mask_style style);

/* Make dst a deep copy of src (dst's previous content is not freed). */
void ev_mask_copy(struct ev_mask *dst, const struct ev_mask *src);

/* Mask the stored JSON text s[0..len) (any bytes; no NUL terminator needed). JSON per RFC
 * 8259 (surrounding whitespace allowed; bytes that are not UTF-8 inside strings are taken as
 * one character each) is masked by key rules and patterns; anything else — a syntax error,
 * trailing text, a NUL byte, nesting deeper than EV_MASK_MAX_DEPTH — as ev_mask_text does.
 * Returns the masked text, malloc'd and NUL-terminated (the caller frees it), its length in
 * *outlen; *nmasked (when not NULL) gets the number of values and pattern matches masked. */
char *ev_mask_json(const struct ev_mask *m, const char *s, size_t len, size_t *outlen,
                   size_t *nmasked);

/* Mask plain text s[0..len) (biz_id, fail_reason, remark) by the value patterns only.
 * Returns and counts as ev_mask_json does. */
char *ev_mask_text(const struct ev_mask *m, const char *s, size_t len, size_t *outlen,
                   size_t *nmasked);

/* Whether the key (decoded text, NUL-terminated) matches one of m's key rules; the style goes
 * to *style (when not NULL): ALL when any rule matching says ALL. */
bool ev_mask_key_matches(const struct ev_mask *m, const char *key, enum ev_mask_style *style);

/* Whether the key matches one of m's identifier globs. */
bool ev_mask_key_is_ident(const struct ev_mask *m, const char *key);

#endif
