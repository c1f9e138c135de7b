/* src/common/json_flat.c - one small JSON object, read; see json_flat.h. A
 * recursive-descent reader of RFC 8259's grammar, strict: no trailing
 * commas, no comments, nothing after the object but blanks. An array is
 * read to its end as strictly and kept out of the fields. */
#include "json_flat.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct reader {
    const char *start, *p;
    char *out;                   /* the next free byte of the string buffer */
    nn_json_flat *j;
    char *err;
    size_t err_len;
} reader;

static int fail(reader *r, const char *what)
{
    return nn_errorf(r->err, r->err_len, "not the JSON expected: %s at offset %ld", what,
                     (long)(r->p - r->start));
}

static void skip_blanks(reader *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static int hex4(reader *r, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return fail(r, "a \\u escape without four hex digits");
        *v = *v * 16 + (unsigned)d;
    }
    r->p += 4;
    return 0;
}

/* A code point as UTF-8 (at most 4 bytes; a \uXXXX escape takes 6 source
 * bytes, a pair 12, so the output never outgrows the input). */
static void put_utf8(reader *r, unsigned c)
{
    if (c < 0x80) {
        *r->out++ = (char)c;
    } else if (c < 0x800) {
        *r->out++ = (char)(0xc0 | c >> 6);
        *r->out++ = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        *r->out++ = (char)(0xe0 | c >> 12);
        *r->out++ = (char)(0x80 | (c >> 6 & 0x3f));
        *r->out++ = (char)(0x80 | (c & 0x3f));
    } else {
        *r->out++ = (char)(0xf0 | c >> 18);
        *r->out++ = (char)(0x80 | (c >> 12 & 0x3f));
        *r->out++ = (char)(0x80 | (c >> 6 & 0x3f));
        *r->out++ = (char)(0x80 | (c & 0x3f));
    }
}

/* \uXXXX, a surrogate pair taken whole; a lone surrogate becomes U+FFFD */
static int unicode_escape(reader *r)
{
    unsigned c, low;
    if (hex4(r, &c) != 0)
        return -1;
    if (c >= 0xd800 && c < 0xdc00 && r->p[0] == '\\' && r->p[1] == 'u') {
        const char *back = r->p;
        r->p += 2;
        if (hex4(r, &low) != 0)
            return -1;
        if (low >= 0xdc00 && low < 0xe000)
            c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        else
            r->p = back;
    }
    put_utf8(r, c >= 0xd800 && c < 0xe000 ? 0xfffd : c);
    return 0;
}

static int escape(reader *r)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = *r->p ? strchr(from, *r->p) : NULL;
    if (*r->p == 'u') {
        r->p++;
        return unicode_escape(r);
    }
    if (!e)
        return fail(r, "an unknown escape");
    *r->out++ = to[e - from];
    r->p++;
    return 0;
}

/* A string after its opening quote, unescaped into the buffer: its start. */
static int string(reader *r, const char **s)
{
    *s = r->out;
    while (*r->p != '"') {
        if (*r->p == '\0' || (unsigned char)*r->p < 0x20)
            return fail(r, *r->p ? "a control character in a string" : "an unterminated string");
        if (*r->p == '\\') {
            r->p++;
            if (escape(r) != 0)
                return -1;
        } else {
            *r->out++ = *r->p++;
        }
    }
    r->p++;
    *r->out++ = '\0';
    return 0;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, copied and converted */
static int number(reader *r, nn_json_field *f)
{
    const char *q = r->p;
    if (*q == '-')
        q++;
    if (*q == '0')
        q++;
    else if (*q >= '1' && *q <= '9')
        while (*q >= '0' && *q <= '9')
            q++;
    else
        return fail(r, "a value that is not a number, string, object, true, false or null");
    if (*q == '.' && q[1] >= '0' && q[1] <= '9')
        for (q++; *q >= '0' && *q <= '9'; q++) {}
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
        if (*e >= '0' && *e <= '9')
            for (q = e; *q >= '0' && *q <= '9'; q++) {}
    }
    f->text = r->out;
    memcpy(r->out, r->p, (size_t)(q - r->p));
    r->out += q - r->p;
    *r->out++ = '\0';
    f->number = strtod(f->text, NULL);
    f->type = NN_JSON_NUMBER;
    r->p = q;
    return 0;
}

static int literal(reader *r, nn_json_field *f)
{
    static const struct { const char *word; enum nn_json_type type; } words[] = {
        { "true", NN_JSON_TRUE }, { "false", NN_JSON_FALSE }, { "null", NN_JSON_NULL },
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if (strncmp(r->p, words[i].word, n) == 0) {
            f->type = words[i].type;
            f->text = words[i].word;
            r->p += n;
            return 0;
        }
    }
    return number(r, f);
}

static int object(reader *r, const char *prefix, int depth);
static int skip_value(reader *r, int depth);

/* An array at r->p ('['): every element read, none kept (a program's
 * history or list the caller does not need; the fields stay flat). */
static int skip_array(reader *r, int depth)
{
    if (depth > NN_JSON_MAX_DEPTH)
        return fail(r, "arrays nested too deep");
    r->p++;
    skip_blanks(r);
    if (*r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (skip_value(r, depth) != 0)
            return -1;
        skip_blanks(r);
        if (*r->p == ']') {
            r->p++;
            return 0;
        }
        if (*r->p != ',')
            return fail(r, "an element not followed by ',' or ']'");
        r->p++;
        skip_blanks(r);
    }
}

/* A value inside an array: read as strictly, nothing kept. An object's
 * fields are read into the table and dropped again. */
static int skip_value(reader *r, int depth)
{
    nn_json_field scratch;
    const char *text;
    if (*r->p == '[')
        return skip_array(r, depth + 1);
    if (*r->p == '{') {
        int kept = r->j->n;
        int rc = object(r, "[]", depth + 1);
        r->j->n = kept;
        return rc;
    }
    if (*r->p == '"') {
        r->p++;
        return string(r, &text);
    }
    return literal(r, &scratch);
}

/* One member's value: a nested object's fields, one field, or an array
 * read and left out. */
static int value(reader *r, const char *key, int depth)
{
    nn_json_field *f;
    if (*r->p == '{')
        return object(r, key, depth + 1);
    if (*r->p == '[')
        return skip_array(r, depth + 1);
    if (r->j->n >= NN_JSON_MAX_FIELDS)
        return fail(r, "too many fields");
    f = &r->j->f[r->j->n];
    memset(f, 0, sizeof *f);
    nn_strlcpy(f->key, key, sizeof f->key);
    if (*r->p == '"') {
        r->p++;
        f->type = NN_JSON_STRING;
        if (string(r, &f->text) != 0)
            return -1;
    } else if (literal(r, f) != 0) {
        return -1;
    }
    r->j->n++;
    return 0;
}

static int member(reader *r, const char *prefix, int depth)
{
    char key[NN_JSON_KEY_LEN];
    const char *name;
    if (*r->p != '"')
        return fail(r, "a member without a quoted name");
    r->p++;
    if (string(r, &name) != 0)
        return -1;
    if ((size_t)snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", name) >= sizeof key)
        return fail(r, "a member name too long");
    skip_blanks(r);
    if (*r->p != ':')
        return fail(r, "a member without ':'");
    r->p++;
    skip_blanks(r);
    return value(r, key, depth);
}

/* An object at r->p ('{'), its members' names under prefix. */
static int object(reader *r, const char *prefix, int depth)
{
    if (depth > NN_JSON_MAX_DEPTH)
        return fail(r, "objects nested too deep");
    r->p++;
    skip_blanks(r);
    if (*r->p == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (member(r, prefix, depth) != 0)
            return -1;
        skip_blanks(r);
        if (*r->p == '}') {
            r->p++;
            return 0;
        }
        if (*r->p != ',')
            return fail(r, "a member not followed by ',' or '}'");
        r->p++;
        skip_blanks(r);
    }
}

int nn_json_flat_parse(const char *text, nn_json_flat *out, char *err, size_t err_len)
{
    reader r = { text, text, NULL, out, err, err_len };
    memset(out, 0, sizeof *out);
    /* strings and numbers never outgrow their source; +1 for the last NUL */
    out->buf = malloc(strlen(text) + 1);
    if (!out->buf)
        return nn_errorf(err, err_len, "out of memory");
    r.out = out->buf;
    skip_blanks(&r);
    if (*r.p != '{')
        return fail(&r, "no object");
    if (object(&r, "", 0) != 0)
        return -1;
    skip_blanks(&r);
    return *r.p ? fail(&r, "text after the object") : 0;
}

void nn_json_flat_free(nn_json_flat *j)
{
    free(j->buf);
    j->buf = NULL;
    j->n = 0;
}

const nn_json_field *nn_json_flat_get(const nn_json_flat *j, const char *key)
{
    for (int i = 0; i < j->n; i++)
        if (strcmp(j->f[i].key, key) == 0)
            return &j->f[i];
    return NULL;
}

const char *nn_json_flat_string(const nn_json_flat *j, const char *key)
{
    const nn_json_field *f = nn_json_flat_get(j, key);
    return f && f->type == NN_JSON_STRING ? f->text : NULL;
}

int nn_json_flat_number(const nn_json_flat *j, const char *key, double *v)
{
    const nn_json_field *f = nn_json_flat_get(j, key);
    if (!f || f->type != NN_JSON_NUMBER)
        return -1;
    *v = f->number;
    return 0;
}
