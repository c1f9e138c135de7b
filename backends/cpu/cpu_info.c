/* backends/cpu/cpu_info.c - what the CPU backend runs on (cpu_info.h says why).
 *
 * The extensions come from cpuid, each checked against the registers the OS
 * saves (XCR0): a CPU with AVX-512 under an OS or hypervisor that does not
 * save its registers cannot run it, and OpenBLAS then must not either.
 */
#define _GNU_SOURCE
#include "cpu_info.h"

#include <cblas.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define NN_HAVE_CPUID 1
#endif

/* OpenBLAS's own queries (cblas.h declares some of them in some versions
 * only; the symbols are in every 0.3.x library). */
extern char *openblas_get_config(void);
extern char *openblas_get_corename(void);
extern int openblas_get_num_threads(void);

/* ---- cpuid --------------------------------------------------------------------------- */

#ifdef NN_HAVE_CPUID
static uint64_t xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* The features cpuid reports that the OS also saves the state of. */
static unsigned cpuid_features(void)
{
    unsigned a, b, c, d, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx)
        return 0;
    uint64_t x = xcr0();
    if ((x & 0x6) != 0x6)                   /* XMM and YMM state */
        return 0;
    f |= NN_CPU_AVX | (fma ? NN_CPU_FMA : 0);
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return f;
    if ((b >> 5) & 1)
        f |= NN_CPU_AVX2;
    if ((x & 0xe0) == 0xe0) {               /* opmask, ZMM_Hi256, Hi16_ZMM */
        f |= ((b >> 16) & 1) ? NN_CPU_AVX512F : 0;
        f |= ((b >> 17) & 1) ? NN_CPU_AVX512DQ : 0;
        f |= ((b >> 30) & 1) ? NN_CPU_AVX512BW : 0;
        f |= ((b >> 31) & 1) ? NN_CPU_AVX512VL : 0;
        f |= ((c >> 11) & 1) ? NN_CPU_AVX512_VNNI : 0;
    }
    unsigned amx_bits = d;
    if ((x & 0x60000) == 0x60000) {         /* XTILECFG and XTILEDATA */
        f |= ((amx_bits >> 24) & 1) ? NN_CPU_AMX_TILE : 0;
        f |= ((amx_bits >> 22) & 1) ? NN_CPU_AMX_BF16 : 0;
        f |= ((amx_bits >> 25) & 1) ? NN_CPU_AMX_INT8 : 0;
    }
    if ((f & NN_CPU_AVX512F) && __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 5) & 1))
        f |= NN_CPU_AVX512_BF16;
    return f;
}

static void cpuid_identity(nn_cpu_info *ci)
{
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(ci->vendor, &b, 4);
        memcpy(ci->vendor + 4, &d, 4);
        memcpy(ci->vendor + 8, &c, 4);
        ci->vendor[12] = '\0';
    }
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        int base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
        ci->family = base_family + (base_family == 0xf ? (int)((a >> 20) & 0xff) : 0);
        ci->model_number = base_model |
            ((base_family == 0x6 || base_family == 0xf) ? (int)((a >> 16) & 0xf) << 4 : 0);
    }
    unsigned brand[12];
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002 + i, &brand[4 * i], &brand[4 * i + 1], &brand[4 * i + 2],
                        &brand[4 * i + 3]);
        char s[49];
        memcpy(s, brand, 48);
        s[48] = '\0';
        const char *p = s;
        while (*p == ' ')
            p++;
        snprintf(ci->model, sizeof ci->model, "%s", p);
    }
}
#endif

/* ---- the clock ----------------------------------------------------------------------- */

static double read_number_file(const char *path)
{
    FILE *f = fopen(path, "r");
    double v = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lf", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

/* cpufreq's maximum when the kernel exposes it (a virtual machine often does
 * not), else the first "cpu MHz" of /proc/cpuinfo (the nominal clock there). */
static double clock_ghz(void)
{
    double khz = read_number_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if (khz > 0)
        return khz / 1e6;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "cpu MHz", 7) == 0) {
            const char *colon = strchr(line, ':');
            mhz = colon ? atof(colon + 1) : 0;
            break;
        }
    fclose(f);
    return mhz / 1e3;
}

/* ---- the peak ------------------------------------------------------------------------ */

/* Float32 FLOPs per cycle of one core: 2 (a multiply-add) x the lanes of an
 * FMA unit x the units. Sources: the vendors' optimisation manuals (Intel's
 * 64 and IA-32 Optimization Reference Manual; AMD's Software Optimization
 * Guides for families 17h, 19h and 1Ah).
 * - AMD 17h models below 30h (Zen, Zen+): two 128-bit FMA pipes: 16.
 * - AMD 17h from model 30h (Zen 2) and 19h (Zen 3, Zen 4: AVX-512 runs as two
 *   256-bit halves): two 256-bit FMA pipes: 32.
 * - AMD 1Ah (Zen 5): two 512-bit FMA pipes: 64.
 * - Intel with AVX-512: two 512-bit units on the server parts this targets
 *   (Xeon Gold, Platinum, Sapphire Rapids): 64; a part with one unit reaches 32.
 * - Intel or other with AVX2 and FMA: two 256-bit units: 32.
 * - AVX without FMA: a 256-bit add and a 256-bit multiply a cycle: 16.
 * - SSE: 8.
 * A virtual CPU may report a generic family and model: the estimate is then
 * that model's, which nnlab says beside the measured rate. */
int nn_cpu_flops_per_cycle(const char *vendor, int family, int model, unsigned features)
{
    int amd = vendor && strcmp(vendor, "AuthenticAMD") == 0;
    int intel = vendor && strcmp(vendor, "GenuineIntel") == 0;
    if (amd && family == 0x17)
        return model < 0x30 ? 16 : 32;
    if (amd && family == 0x19)
        return 32;
    if (amd && family >= 0x1a)
        return (features & NN_CPU_AVX512F) ? 64 : 32;
    if (intel && (features & NN_CPU_AVX512F))
        return 64;
    if ((features & NN_CPU_AVX2) && (features & NN_CPU_FMA))
        return 32;
    if (features & NN_CPU_AVX)
        return 16;
    return 8;
}

/* ---- OpenBLAS ------------------------------------------------------------------------ */

static void copy_word(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    while (src && src[i] && !isspace((unsigned char)src[i]) && i + 1 < len) {
        dst[i] = src[i];
        i++;
    }
    dst[i] = '\0';
}

static void read_blas(nn_cpu_info *ci)
{
    const char *config = openblas_get_config();
    const char *v = config ? strstr(config, "OpenBLAS ") : NULL;
    copy_word(ci->blas_version, sizeof ci->blas_version, v ? v + 9 : "?");
    copy_word(ci->blas_core, sizeof ci->blas_core, openblas_get_corename());
    ci->blas_threads = openblas_get_num_threads();
    const char *env = getenv("OPENBLAS_CORETYPE");
    copy_word(ci->blas_coretype_env, sizeof ci->blas_coretype_env, env ? env : "");
}

/* OpenBLAS's x86 core names and the instructions their kernels use
 * (kernel/x86_64/KERNEL.<name> in its sources). */
static const struct {
    const char *name;
    enum nn_isa_level level;
} blas_cores[] = {
    { "SapphireRapids", NN_ISA_AVX512 }, { "Cooperlake", NN_ISA_AVX512 },
    { "SkylakeX", NN_ISA_AVX512 },       { "Haswell", NN_ISA_AVX2 },
    { "Zen", NN_ISA_AVX2 },              { "Sandybridge", NN_ISA_AVX },
    { "Bulldozer", NN_ISA_AVX },         { "Piledriver", NN_ISA_AVX },
    { "Steamroller", NN_ISA_AVX },       { "Excavator", NN_ISA_AVX },
    { "Nehalem", NN_ISA_SSE },           { "Core2", NN_ISA_SSE },
    { "Penryn", NN_ISA_SSE },            { "Dunnington", NN_ISA_SSE },
    { "Atom", NN_ISA_SSE },              { "Prescott", NN_ISA_SSE },
    { "Barcelona", NN_ISA_SSE },         { "Opteron", NN_ISA_SSE },
    { "Nano", NN_ISA_SSE },              { "Katmai", NN_ISA_SSE },
};

enum nn_isa_level nn_blas_core_level(const char *corename)
{
    for (size_t i = 0; corename && i < sizeof blas_cores / sizeof blas_cores[0]; i++)
        if (strcasecmp(corename, blas_cores[i].name) == 0)
            return blas_cores[i].level;
    return NN_ISA_UNKNOWN;
}

enum nn_isa_level nn_cpu_isa_level(unsigned f)
{
    const unsigned avx512 = NN_CPU_AVX512F | NN_CPU_AVX512BW | NN_CPU_AVX512VL | NN_CPU_AVX512DQ;
    if ((f & avx512) == avx512)
        return NN_ISA_AVX512;
    if ((f & NN_CPU_AVX2) && (f & NN_CPU_FMA))
        return NN_ISA_AVX2;
    if (f & NN_CPU_AVX)
        return NN_ISA_AVX;
    return NN_ISA_SSE;
}

const char *nn_isa_level_name(enum nn_isa_level level)
{
    switch (level) {
    case NN_ISA_SSE: return "SSE";
    case NN_ISA_AVX: return "AVX";
    case NN_ISA_AVX2: return "AVX2";
    case NN_ISA_AVX512: return "AVX-512";
    default: return "unknown";
    }
}

/* ---- reading and words --------------------------------------------------------------- */

static void model_from_proc(nn_cpu_info *ci)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            const char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                snprintf(ci->model, sizeof ci->model, "%.*s", (int)strcspn(p, "\n"), p);
            }
            break;
        }
    fclose(f);
}

void nn_cpu_info_read(nn_cpu_info *ci)
{
    memset(ci, 0, sizeof *ci);
#ifdef NN_HAVE_CPUID
    cpuid_identity(ci);
    ci->features = cpuid_features();
#endif
    if (!ci->model[0])
        model_from_proc(ci);
    if (!ci->model[0])
        snprintf(ci->model, sizeof ci->model, "unknown CPU");
    ci->clock_ghz = clock_ghz();
    ci->flops_per_cycle = nn_cpu_flops_per_cycle(ci->vendor, ci->family, ci->model_number,
                                                 ci->features);
    ci->peak_gflops_core = ci->clock_ghz * ci->flops_per_cycle;
    read_blas(ci);
}

unsigned nn_cpu_features_now(void)
{
#ifdef NN_HAVE_CPUID
    return cpuid_features();
#else
    return 0;
#endif
}

char *nn_cpu_features_text(unsigned f, char *buf, size_t len)
{
    static const struct { unsigned bit; const char *name; } base[] = {
        { NN_CPU_AVX, "AVX" }, { NN_CPU_AVX2, "AVX2" }, { NN_CPU_FMA, "FMA" },
    }, avx512[] = {
        { NN_CPU_AVX512F, "F" }, { NN_CPU_AVX512BW, "BW" }, { NN_CPU_AVX512VL, "VL" },
        { NN_CPU_AVX512DQ, "DQ" }, { NN_CPU_AVX512_VNNI, "VNNI" }, { NN_CPU_AVX512_BF16, "BF16" },
    }, amx[] = {
        { NN_CPU_AMX_TILE, "TILE" }, { NN_CPU_AMX_BF16, "BF16" }, { NN_CPU_AMX_INT8, "INT8" },
    };
    size_t n = 0;
    buf[0] = '\0';
#define PUT(...) (n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__))
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (f & base[i].bit)
            PUT("%s%s", n ? " " : "", base[i].name);
    const char *sep = "";
    for (size_t i = 0; i < sizeof avx512 / sizeof avx512[0]; i++)
        if (f & avx512[i].bit) {
            PUT("%s%s", *sep ? sep : (n ? " AVX-512(" : "AVX-512("), avx512[i].name);
            sep = " ";
        }
    if (*sep)
        PUT(")");
    sep = "";
    for (size_t i = 0; i < sizeof amx / sizeof amx[0]; i++)
        if (f & amx[i].bit) {
            PUT("%s%s", *sep ? sep : (n ? " AMX(" : "AMX("), amx[i].name);
            sep = " ";
        }
    if (*sep)
        PUT(")");
    if (n == 0)
        PUT("SSE only");
#undef PUT
    return buf;
}

void nn_cpu_info_line(const nn_cpu_info *ci, char *buf, size_t len)
{
    char feats[160], peak[64] = "peak unknown (no clock)";
    nn_cpu_features_text(ci->features, feats, sizeof feats);
    if (ci->peak_gflops_core > 0)
        snprintf(peak, sizeof peak, "FMA peak ~%.0f GFLOP/s a core (%d FLOP/cycle x %.2f GHz)",
                 ci->peak_gflops_core, ci->flops_per_cycle, ci->clock_ghz);
    char from[96] = "";
    if (ci->blas_core_from[0])
        snprintf(from, sizeof from, " (chosen by nnlab: OpenBLAS took %s for this CPU)",
                 ci->blas_core_from);
    snprintf(buf, len, "%s (family %d model %d; %s); OpenBLAS %s, %s kernels%s%s%s%s; %s",
             ci->model, ci->family, ci->model_number, feats, ci->blas_version, ci->blas_core,
             ci->blas_coretype_env[0] ? " (OPENBLAS_CORETYPE=" : "", ci->blas_coretype_env,
             ci->blas_coretype_env[0] ? ")" : "", from, peak);
}

int nn_cpu_blas_below_cpu(const nn_cpu_info *ci, char *why, size_t why_len)
{
    enum nn_isa_level cpu = nn_cpu_isa_level(ci->features);
    enum nn_isa_level blas = nn_blas_core_level(ci->blas_core);
    if (why_len)
        why[0] = '\0';
    if (blas == NN_ISA_UNKNOWN || blas >= cpu)
        return 0;
    snprintf(why, why_len,
             "OpenBLAS %s runs its %s kernels (%s) on a CPU with %s%s%s: %s",
             ci->blas_version, ci->blas_core, nn_isa_level_name(blas), nn_isa_level_name(cpu),
             ci->blas_coretype_env[0] ? "; OPENBLAS_CORETYPE is set to " : "",
             ci->blas_coretype_env,
             ci->blas_coretype_env[0]
                 ? "unset it if this OpenBLAS supports the CPU, or install a newer one"
                 : "nnlab makes it take a better core itself, unless NNLAB_OPENBLAS_KEEP_CORE=1 "
                   "or none of this OpenBLAS's would run; else install an OpenBLAS whose "
                   "DYNAMIC_ARCH build knows this CPU, or set OPENBLAS_CORETYPE to a core of "
                   "its level");
    return 1;
}

int nn_cpu_sgemm_below_peak(const nn_cpu_info *ci, double gflops, char *why, size_t why_len)
{
    int measured = ci->peak_gflops_core_measured > 0;
    double peak = measured ? ci->peak_gflops_core_measured : ci->peak_gflops_core;
    if (why_len)
        why[0] = '\0';
    if (peak <= 0 || gflops <= 0 || gflops >= 0.5 * peak)
        return 0;
    snprintf(why, why_len,
             "one core's sgemm ran at %.1f GFLOP/s, %.0f%% of its %s FMA peak (%.0f): "
             "check OpenBLAS's kernels (%s), other programs on the core, and the clock",
             gflops, 100.0 * gflops / peak, measured ? "measured" : "estimated", peak, ci->blas_core);
    return 1;
}
