/* src/common/xdg.c - see xdg.h. */
#include "xdg.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct xdg_base {
    const char *variable;        /* "XDG_CONFIG_HOME" */
    const char *under_home;      /* ".config": the spec's default under $HOME */
} xdg_base;

static const xdg_base bases[] = {
    [NN_XDG_CONFIG] = { "XDG_CONFIG_HOME", ".config" },
    [NN_XDG_CACHE] = { "XDG_CACHE_HOME", ".cache" },
    [NN_XDG_DATA] = { "XDG_DATA_HOME", ".local/share" },
};

int nn_xdg_dir(nn_xdg_kind kind, const char *sub, char *out, size_t len)
{
    if ((unsigned)kind >= sizeof bases / sizeof bases[0])
        return -1;
    const xdg_base *b = &bases[kind];
    const char *xdg = getenv(b->variable), *home = getenv("HOME");
    const char *sep = sub && sub[0] ? "/" : "", *tail = sub ? sub : "";
    int n;
    if (xdg && xdg[0] == '/')          /* the XDG spec: ignore a relative value */
        n = snprintf(out, len, "%s/nnlab%s%s", xdg, sep, tail);
    else if (home && home[0])
        n = snprintf(out, len, "%s/%s/nnlab%s%s", home, b->under_home, sep, tail);
    else
        return -1;
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
