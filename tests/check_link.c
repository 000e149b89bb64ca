/* Linking: the version's one home, and the CUDA libraries libhisp opens at
 * run time (backends/cuda/cuda_dl.c): every function of the cuSPARSE and
 * NVRTC tables found in the toolkit's libraries (no device needed), and a
 * missing library named in the reason; the OpenCL ICD loader's table (opened
 * at run time too, backends/opencl/cl_dl.c). The installed library and programs
 * linked against it are checked by examples/test_install.sh
 * (./hisp.sh test-install). */
#include "testutil.h"
#ifdef HISP_HAVE_CUDA
#include "cuda/cuda_dl.h"
#include <cuda_runtime_api.h>
#endif
#ifdef HISP_HAVE_OPENCL
#define HISP_CL_DL_NO_REDIRECT /* the table itself, next to the test's own OpenCL calls */
#include "opencl/cl_dl.h"
#endif

#include <stdio.h>
#include <string.h>

START_TEST(test_version)
{
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", HISP_VERSION_MAJOR, HISP_VERSION_MINOR,
             HISP_VERSION_PATCH);
    ck_assert_str_eq(hisp_version_string(), want);
}
END_TEST

#ifdef HISP_HAVE_CUDA
/* The table's library is there (the CUDA toolkit is installed wherever this
 * backend is built) or the status names it; every slot is bound. */
#define SLOT_SET(f) ck_assert_msg(t->f != NULL, "%s not bound", #f);

START_TEST(test_cusparse_table)
{
    hisp_context ctx = test_context(0);
    const hisp_cuda_cusparse_fns *t = NULL;
    char soname[64];
    snprintf(soname, sizeof soname, "libcusparse.so.%d", CUSPARSE_VER_MAJOR);
    hisp_status s = hisp_cuda_cusparse(ctx, &t);
    if (s != HISP_SUCCESS) {
        hisp_error_info e;
        ck_assert_int_eq(hisp_context_last_error(ctx, &e), HISP_SUCCESS);
        ck_assert_int_eq(s, HISP_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(e.message, soname), "%s", e.message);
        test_skip("link: %s", e.message);
    } else {
        HISP_CUDA_CUSPARSE_FNS(SLOT_SET)
        /* a call through the table that needs no device */
        const char *msg = t->cusparseGetErrorString(CUSPARSE_STATUS_ALLOC_FAILED);
        ck_assert_msg(msg && *msg, "cusparseGetErrorString gave nothing");
        const hisp_cuda_cusparse_fns *again = NULL;
        ck_assert_int_eq(hisp_cuda_cusparse(ctx, &again), HISP_SUCCESS);
        ck_assert_ptr_eq(again, t);
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_nvrtc_table)
{
    hisp_context ctx = test_context(0);
    const hisp_cuda_nvrtc_fns *t = NULL;
    hisp_status s = hisp_cuda_nvrtc(ctx, &t);
    if (s != HISP_SUCCESS) {
        hisp_error_info e;
        ck_assert_int_eq(hisp_context_last_error(ctx, &e), HISP_SUCCESS);
        ck_assert_msg(strstr(e.message, "libnvrtc.so."), "%s", e.message);
        test_skip("link: %s", e.message);
    } else {
        HISP_CUDA_NVRTC_FNS(SLOT_SET)
        ck_assert_int_eq(t->major, CUDART_VERSION / 1000);
        ck_assert_str_eq(t->nvrtcGetErrorString(NVRTC_SUCCESS), "NVRTC_SUCCESS");
    }
    hisp_context_destroy(&ctx);
}
END_TEST

START_TEST(test_missing_library)
{
    char why[512] = "";
    void *h = hisp_cuda_dl_open("libhisp_absent.so.7", why, sizeof why);
    ck_assert_ptr_null(h);
    ck_assert_msg(strstr(why, "libhisp_absent.so.7 not found"), "%s", why);
}
END_TEST
#endif

#ifdef HISP_HAVE_OPENCL
#define SLOT_SET_CL(f) ck_assert_msg(t->f != NULL, "%s not bound", #f);

/* Where the OpenCL backend finds devices, the loader's table is complete and
 * answers as the loader the test links does. */
START_TEST(test_opencl_table)
{
    int n = 0;
    hisp_context ctx = test_default_context();
    ck_assert_int_eq(hisp_backend_device_count(ctx, HISP_BACKEND_OPENCL, &n), HISP_SUCCESS);
    hisp_context_destroy(&ctx);
    const char *why = "unset";
    const hisp_cl_fn_table *t = hisp_cl_fns(&why);
    if (n == 0 && !t) {
        ck_assert_msg(why && strstr(why, "libOpenCL.so.1"), "%s", why ? why : "(null)");
        test_skip("opencl table: no OpenCL loader (%s)", why);
        return;
    }
    ck_assert_msg(t && why == NULL, "no table: %s", why ? why : "(null)");
    HISP_CL_FNS(SLOT_SET_CL)
    cl_uint mine = 0, theirs = 0;
    ck_assert_int_eq(t->clGetPlatformIDs(0, NULL, &mine), clGetPlatformIDs(0, NULL, &theirs));
    ck_assert_uint_eq(mine, theirs);
    ck_assert_ptr_eq(hisp_cl_fns(NULL), t); /* one table, opened once */
}
END_TEST
#endif

Suite *suite_link(void)
{
    Suite *s = suite_create("link");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_version);
#ifdef HISP_HAVE_CUDA
    tcase_add_test(tc, test_cusparse_table);
    tcase_add_test(tc, test_nvrtc_table);
    tcase_add_test(tc, test_missing_library);
#endif
#ifdef HISP_HAVE_OPENCL
    tcase_add_test(tc, test_opencl_table);
#endif
    suite_add_tcase(s, tc);
    return s;
}
