/* A C program using convguard: plan a convolution (the solver is chosen from the results
 * database's evidence for this machine; a problem never seen here is probed first, every solver
 * in a sandboxed worker process), run it, check every output by hand.
 * Built and run as a test (tests/CMakeLists.txt); docs/api.md walks through it.
 *   usage: c_api_example [DATABASE] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "convguard/convguard.h"

int main(int argc, char** argv) {
  char msg[512];
  cg_context* ctx = NULL;
  if (cg_context_open_ex("cpu", argc > 1 ? argv[1] : NULL, CG_PROBE_UNKNOWN, &ctx, msg,
                         sizeof msg) != 0) {
    fprintf(stderr, "cg_context_open: %s\n", msg);
    return 1;
  }
  /* 1 image, 3 -> 4 channels, 8x8, 3x3 filter, padding 1: NCHW x[1][3][8][8], w[4][3][3][3], y[1][4][8][8]. */
  cg_plan* plan = NULL;
  if (cg_plan_create(ctx, "mb1ic3ih8oc4kh3ph1", &plan, msg, sizeof msg) != 0) {
    fprintf(stderr, "cg_plan_create: %s\n", msg);
    return 1;
  }
  printf("solver %s (%s), workspace %llu bytes\n", cg_plan_solver(plan), cg_plan_why(plan),
         (unsigned long long)cg_plan_workspace_bytes(plan));
  float x[3 * 8 * 8], w[4 * 3 * 3 * 3], y[4 * 8 * 8];
  for (int i = 0; i < 3 * 64; ++i) x[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < 4 * 27; ++i) w[i] = (float)(i % 5) - 2.0f;
  if (cg_plan_run(plan, x, w, y, msg, sizeof msg) != 0) {
    fprintf(stderr, "cg_plan_run: %s\n", msg);
    return 1;
  }
  /* Check every output against a direct loop (integers: exact). */
  int bad = 0;
  for (int k = 0; k < 4; ++k)
    for (int oh = 0; oh < 8; ++oh)
      for (int ow = 0; ow < 8; ++ow) {
        double s = 0;
        for (int c = 0; c < 3; ++c)
          for (int r = 0; r < 3; ++r)
            for (int q = 0; q < 3; ++q) {
              const int ih = oh - 1 + r, iw = ow - 1 + q;
              if (ih < 0 || ih >= 8 || iw < 0 || iw >= 8) continue;
              s += x[(c * 8 + ih) * 8 + iw] * w[((k * 3 + c) * 3 + r) * 3 + q];
            }
        if (fabs(s - y[(k * 8 + oh) * 8 + ow]) > 1e-4) ++bad;
      }
  printf("%s: %d of 256 outputs differ from the direct loop\n", bad ? "FAILED" : "ok", bad);
  /* Bad input is an error with a message, not an abort. */
  cg_plan* nope = NULL;
  if (cg_plan_create(ctx, "mb1ic0ih8oc4kh3", &nope, msg, sizeof msg) == 0) {
    fprintf(stderr, "an invalid problem was accepted\n");
    return 1;
  }
  printf("invalid problem rejected: %s\n", msg);
  cg_plan_destroy(plan);
  cg_context_close(ctx);
  return bad ? 1 : 0;
}
