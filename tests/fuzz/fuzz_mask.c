/* evtop — fuzz target for masking (core/mask): any bytes, as a payload or a free-text column
 * can hold them. The first input byte picks the rules (bits 0-1: the defaults; none; the
 * defaults plus a CJK rule, patterns in the ALL style; a few globs with '?' and '*' and the
 * patterns of bits 4-7) and whether the rest is masked as JSON or as text (bit 2).
 * Invariants:
 *   - the output is NUL-terminated at its length, at most twice the input (the header
 *     promises 2 * len + 64), and valid UTF-8 when the input was;
 *   - text jansson takes for JSON (with no NUL byte) stays JSON of the same shape: the same
 *     keys, array lengths and literals; strings stay strings; a number stays the same number
 *     or becomes a string;
 *   - the bytes other than '*' and '"' are the input's, in order;
 *   - with no rules the output is the input, and nothing masked means nothing changed;
 *   - masking the output again never makes it longer; a copy of the rules masks the same. */
#include <config.h>

#include "core/mask.h"
#include "core/util.h"
#include "fuzz.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static void rules(struct ev_mask *m, unsigned pick)
{
	switch (pick & 3) {
	case 0:
		ev_mask_defaults(m);
		break;
	case 1:
		ev_mask_init(m);
		break;
	case 2:
		ev_mask_defaults(m);
		FUZZ_CHECK(ev_mask_add_key(m, "手机", EV_MASK_ALL, NULL) == 0, "CJK glob refused");
		m->pattern_style = EV_MASK_ALL;
		break;
	default:
		ev_mask_init(m);
		FUZZ_CHECK(ev_mask_add_key(m, "a?", EV_MASK_KEEP, NULL) == 0, "glob refused");
		FUZZ_CHECK(ev_mask_add_key(m, "*b*", EV_MASK_ALL, NULL) == 0, "glob refused");
		FUZZ_CHECK(ev_mask_add_key(m, "?中*", EV_MASK_KEEP, NULL) == 0, "glob refused");
		FUZZ_CHECK(ev_mask_add_ident(m, "*c", NULL) == 0, "glob refused");
		m->patterns = (pick >> 4) & EV_MASK_P_ALL;
		break;
	}
}

/* Whether out has the shape of in (see above). jansson caps the depth, so this recursion is
 * bounded. */
static bool same_shape(json_t *in, json_t *out)
{
	switch (json_typeof(in)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *v;
		if (!json_is_object(out) || json_object_size(in) != json_object_size(out))
			return false;
		json_object_foreach(in, key,
		                    v) if (!same_shape(v, json_object_get(out, key))) return false;
		return true;
	}
	case JSON_ARRAY:
		if (!json_is_array(out) || json_array_size(in) != json_array_size(out))
			return false;
		for (size_t i = 0; i < json_array_size(in); i++)
			if (!same_shape(json_array_get(in, i), json_array_get(out, i)))
				return false;
		return true;
	case JSON_STRING:
		return json_is_string(out);
	case JSON_INTEGER:
		return json_is_string(out) ||
		       (json_is_integer(out) && json_integer_value(in) == json_integer_value(out));
	case JSON_REAL:
		return json_is_string(out) ||
		       (json_is_real(out) && json_real_value(in) == json_real_value(out));
	default:
		return out != NULL && json_typeof(in) == json_typeof(out);
	}
}

/* Whether the bytes of out other than '*' and '"' (what masking writes) appear in order in
 * in: masking only replaces, never invents or reorders. */
static bool only_replaced(const char *in, size_t len, const char *out, size_t outlen)
{
	size_t j = 0;
	for (size_t i = 0; i < outlen; i++) {
		if (out[i] == '*' || out[i] == '"')
			continue;
		while (j < len && in[j] != out[i])
			j++;
		if (j == len)
			return false;
		j++;
	}
	return true;
}

static char *mask(const struct ev_mask *m, bool json, const char *s, size_t len, size_t *outlen,
                  size_t *n)
{
	return json ? ev_mask_json(m, s, len, outlen, n) : ev_mask_text(m, s, len, outlen, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned pick = size ? data[0] : 0;
	const char *text = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0;
	bool json = !(pick & 4);
	struct ev_mask m;
	size_t outlen = 0, n = 0;

	rules(&m, pick);
	char *out = mask(&m, json, text, len, &outlen, &n);
	FUZZ_CHECK(out != NULL && out[outlen] == '\0', "not NUL-terminated at its length");
	FUZZ_CHECK(outlen <= 2 * len, "%zu bytes out of %zu", outlen, len);
	if (fuzz_utf8_valid(text, len))
		FUZZ_CHECK(fuzz_utf8_valid(out, outlen), "valid UTF-8 in, invalid out");
	FUZZ_CHECK(only_replaced(text, len, out, outlen), "bytes invented: %s", out);
	if ((pick & 3) == 1)
		FUZZ_CHECK(n == 0 && outlen == len && memcmp(out, text, len) == 0,
		           "no rules, yet %zu masked", n);
	if (n == 0)
		FUZZ_CHECK(outlen == len && memcmp(out, text, len) == 0,
		           "nothing masked, yet the text changed");

	/* jansson stops reading at a raw NUL byte ("2\0" loads as 2); to evtop that is not JSON. */
	if (json && memchr(text, '\0', len) == NULL) {
		json_error_t e;
		json_t *in = json_loadb(text, len, JSON_DECODE_ANY, &e);
		if (in != NULL) {
			json_t *o = json_loadb(out, outlen, JSON_DECODE_ANY, &e);
			FUZZ_CHECK(o != NULL, "JSON in, not JSON out: %s: %s", e.text, out);
			FUZZ_CHECK(same_shape(in, o), "the shape changed: %s", out);
			json_decref(o);
			json_decref(in);
		}
	}

	size_t again_len = 0;
	char *again = mask(&m, json, out, outlen, &again_len, NULL);
	FUZZ_CHECK(again_len <= outlen, "masking again grew %zu to %zu bytes", outlen, again_len);
	free(again);

	/* A copy masks the same. */
	struct ev_mask c;
	ev_mask_copy(&c, &m);
	ev_mask_free(&m);
	size_t clen = 0;
	char *copied = mask(&c, json, text, len, &clen, NULL);
	FUZZ_CHECK(clen == outlen && memcmp(copied, out, clen) == 0, "the copy masked differently");
	free(copied);
	free(out);
	ev_mask_free(&c);
	return 0;
}
