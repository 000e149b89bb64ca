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
    {"demo", cmd_demo, "SpMV on generated matrices on the best backend, checked: one table"},
    {"convert", cmd_convert, "convert between Matrix Market (.mtx) and HiSparse (.hisp) files"},
    {"add", cmd_add, "C = alpha*op(A) + beta*op(B) into a HiSparse (or .mtx) file"},
    {"multiply", cmd_multiply, "C = op(A)*op(B), the sparse matrix-matrix product, into a file"},
    {"edit", cmd_edit, "copy-on-write inserts and removals on a HiSparse tree"},
    {"mspmv", cmd_mspmv, "SpMV over several devices (MSREP pCSR/pCSC/pCOO); --mpi: ranks"},
    {"tune", cmd_tune, "the fastest format and compound layout x schedule; plan cache"},
    {"solve", cmd_solve, "solve A x = b with CG, BiCGSTAB, GMRES or LSQR; true residual, timing"},
    {"bench", cmd_bench, "one operation on every backend, device and cuSPARSE: one table"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: hisp <command> [options]\n"
               "       hisp --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'hisp <command> --help' describes a command.\n"
               "\nmatrix inputs (every command): FILE.mtx, FILE.hisp or gen:KIND[:N[:SEED]]\n"
               "(hisp gen's kinds, N its --n or rmat's --scale, SEED its --seed; each optional).\n"
               "\ncommon options, one name each in every command that takes them:\n"
               "  -o FILE              the matrix or vector the command computes (gen,\n"
               "                       convert, add, multiply, edit, spmv, mspmv, solve;\n"
               "                       --out and --output are aliases)\n"
               "  --type T             entry type: f32, f64, c32, c64, q32, q64, b3x3_f32 or\n"
               "                       b3x3_f64 (default: the input's: real, integer, pattern\n"
               "                       f64; complex c64; quaternion q64; a generator its\n"
               "                       family; .hisp its own; --entry and --precision are\n"
               "                       aliases)\n"
               "  --transpose [n|t|h]  op(A) = A, A^T (also --transpose alone) or A^H (spmv,\n"
               "                       mspmv, add, tune; spmv and mspmv also take --op n|t|h)\n"
               "  --backend B          auto (default: CUDA if a GPU answers, else OpenCL, else\n"
               "                       reference), reference, opencl or cuda\n"
               "  --device I           which device of the backend: its index in hisp info\n"
               "  --devices N          how many devices the work is split over (mspmv, solve;\n"
               "                       with --device I, N parts share device I)\n"
               "  --json               machine-readable output; every command's but info's\n"
               "                       has \"backend\", \"device\" {\"backend\", \"index\",\n"
               "                       \"name\", \"platform\", \"type\"}, \"type\" and\n"
               "                       \"transfers\" (bench: per row; mspmv: per part)\n"
               "  --help, -h           the command's options\n"
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
