/* hisp: command-line front end. Dispatches to one subcommand. */
#include "cli.h"

#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"info", cmd_info, "backends compiled in, the devices each one finds; --options"},
    {"gen", cmd_gen, "generate a test matrix (any entry type) and write it as Matrix Market"},
    {"stats", cmd_stats, "sizes, row-length statistics and storage bytes of a matrix"},
    {"spmv", cmd_spmv, "y = alpha*op(A)*x + beta*y on a backend, timed and checked"},
    {"demo", cmd_demo, "the main job: generate, run SpMV on the best backend, print a table"},
    {"convert", cmd_convert, "convert between Matrix Market (.mtx) and HiSparse (.hisp) files"},
    {"add", cmd_add, "C = alpha*op(A) + beta*op(B) into a HiSparse (or .mtx) file, on the host"},
    {"edit", cmd_edit, "copy-on-write inserts and removals on a HiSparse tree"},
    {"mspmv", cmd_mspmv, "SpMV over several devices (MSREP pCSR/pCSC/pCOO), with --mpi over ranks"},
    {"tune", cmd_tune, "tune compound-entry SpMV: layouts x schedules, ranked table, plan cache"},
    {"solve", cmd_solve, "solve A x = b with CG, BiCGSTAB, GMRES or LSQR; true residual, timing"},
    {"bench", cmd_bench, "one operation on every backend, device and cuSPARSE: one table"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: hisp <command> [options]\n"
               "       hisp --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'hisp <command> --help' describes a command; every command takes --json.\n"
               "\nmatrix inputs (every command): FILE.mtx, FILE.hisp or gen:KIND[:N[:SEED]]\n"
               "(hisp gen's kinds, N its --n or rmat's --scale, SEED its --seed; each optional).\n"
               "The entry type comes from the input (real, integer, pattern: f64; complex: c64;\n"
               "quaternion: q64; a generator its family; .hisp its own); --type f32, f64, c32,\n"
               "c64, q32, q64, b3x3_f32 or b3x3_f64 chooses another (--entry and --precision\n"
               "are aliases). --backend defaults to auto: CUDA if a GPU answers, else OpenCL,\n"
               "else reference. --json shares \"type\", \"device\" {\"backend\", \"index\",\n"
               "\"name\", \"platform\", \"type\"} and \"transfers\".\n"
               "\nlibrary options (threads, cache_dir, debug): HISP_OPTIONS=\"name=value,...\"\n"
               "in the environment; 'hisp info --options' lists them.\n"
               "\nexit status:\n"
               "  0  success\n"
               "  1  usage error (unknown command or option, missing argument)\n"
               "  2  input error (malformed or unreadable file, invalid value)\n"
               "  3  backend or device error (no device, backend not compiled in,\n"
               "     kernel build or device failure, out of device memory)\n"
               "  4  solve: stopped without converging (iteration limit, breakdown, ...)\n"
               "  5  spmv --check: error against the reference above tolerance\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("hisp %s\n", hisp_version_string());
        return CLI_OK;
    }
    /* solve over MPI ranks runs in hisp-mpi (cli/mpi/solve_mpi.c) */
    if (strcmp(cmd, "solve") == 0 && cli_has_flag(argc - 1, argv + 1, "--mpi")) {
#ifdef HISP_CLI_MPI
        return solve_mpi(argc - 1, argv + 1);
#else
        return cli_exec_mpi(argc - 1, argv + 1);
#endif
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    if (cmd[0] == '-')
        fprintf(stderr, "hisp: unknown option '%s'\n\n", cmd);
    else
        fprintf(stderr, "hisp: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return CLI_USAGE;
}
