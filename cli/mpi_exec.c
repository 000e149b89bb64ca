/* The MPI forms of the commands (`hisp mspmv --mpi`, `hisp solve --mpi`) run
 * in build/bin/hisp-mpi, which links MPI; the plain program becomes it. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cli_has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return false;
        if (strcmp(argv[i], flag) == 0) return true;
    }
    return false;
}

int cli_exec_mpi(int argc, char **argv)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 16);
    if (len <= 0) return cli_value_error("--mpi: cannot locate this program");
    self[len] = 0;
    char *slash = strrchr(self, '/');
    snprintf(slash ? slash + 1 : self, 16, "hisp-mpi");
    char **av = calloc((size_t)argc + 2, sizeof *av);
    if (!av) return cli_fail(NULL, HISP_ERR_OUT_OF_HOST_MEMORY, NULL);
    av[0] = self;
    for (int i = 0; i < argc; i++)
        av[i + 1] = argv[i];
    execv(self, av);
    fprintf(stderr, "hisp: --mpi needs %s (built with mpi=yes/auto where MPI is installed): %s\n",
            self, strerror(errno));
    free(av);
    return CLI_BACKEND;
}
