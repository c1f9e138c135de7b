/* src/core/preset_file.h - a preset file's bytes, before the INI reader sees
 * them: what the path is (a regular file, or why not), its text read once
 * into memory (bounded, never blocking on a FIFO or reading a device), a
 * UTF-8 byte-order mark dropped, sections and keys given twice found (which
 * iniparser would silently merge), and the text handed to iniparser. Private
 * to src/core, and to the GPU profiles' reader (src/analysis/model/profile.c),
 * which reads its files through the same caps. */
#ifndef NNLAB_PRESET_FILE_H
#define NNLAB_PRESET_FILE_H

#include <stddef.h>

#include <iniparser/iniparser.h>

/* A preset is a few kilobytes; anything larger is not one. */
#define NN_PRESET_MAX_BYTES (1L << 20)

/* 0 when path is a regular file (links followed), else -1 and why:
 * "PATH: no such preset file", "PATH: is a directory, not a preset file",
 * "PATH: not a regular file (a FIFO)", "PATH: dangling link to TARGET",
 * "PATH: permission denied". */
int nn_preset_file_check(const char *path, char *err, size_t err_len);

/* The file's text, NUL-terminated, without a leading UTF-8 BOM: *text is
 * malloc'ed (free it), *len its length. -1 with a one-line message naming
 * the file (the reasons above, "too large", a read error). */
int nn_preset_file_read(const char *path, char **text, size_t *len, char *err, size_t err_len);

/* Limits no preset comes near (the largest shipped, tabnet-regression, has
 * 44 sections and 153 keys; a network has at most NN_MAX_LAYERS layers), so
 * that any file within NN_PRESET_MAX_BYTES is refused at once instead of
 * handed to iniparser, whose dictionary is quadratic in its entries. */
#define NN_PRESET_MAX_SECTIONS 256L
#define NN_PRESET_MAX_KEYS 4096L

/* One pass over the text as iniparser reads lines (sections and keys
 * compare case-blind, a line ending in '\' goes on on the next, ';' and '#'
 * start comments), in time linear in its length. -1 with "PATH: line N:
 * more than 256 sections (no preset needs that many)" (or keys) when a limit
 * is passed: call it before iniparser. 1 with the first repeat in err,
 * "PATH: [train] given twice (lines 3 and 20)" or "PATH: [train] batch given
 * twice (lines 5 and 9)", which iniparser would silently merge (a syntax
 * error iniparser finds comes first). 0 when neither. */
int nn_preset_text_scan(const char *path, const char *text, char *err, size_t err_len);

/* iniparser_load on text (through an in-memory file, /proc/self/fd/N), so
 * that it parses exactly the bytes checked. NULL with errno set when the
 * text cannot be handed over; iniparser's own errors go to its callback. */
dictionary *nn_preset_text_parse(const char *text, size_t len);

/* The same reader and caps for every INI file nnlab reads (presets, GPU
 * profiles): what names the kind of file in the messages ("too large for a
 * GPU profile", "no GPU profile needs that many"). The nn_preset_ ones
 * above are these with "preset". */
int nn_ini_file_read(const char *path, const char *what, char **text, size_t *len, char *err,
                     size_t err_len);
int nn_ini_text_scan(const char *path, const char *what, const char *text, char *err, size_t err_len);

/* The whole load (src/core/ini_load.c): the file read and scanned as above,
 * then parsed by iniparser with its messages kept off the terminal. 0 and
 * *d (iniparser_freedict it); -1 and err naming the file: a cap passed, a
 * read error, iniparser's syntax error ("PATH: syntax error: line N: TEXT",
 * with "not a WHAT:" before "syntax" for a kind other than "preset"), or a
 * key or section given twice. A syntax error outranks a repeat: the file is
 * not an INI file at all. */
int nn_ini_load(const char *path, const char *what, dictionary **d, char *err, size_t err_len);

#endif
