/* A 5-point smoothing of an image, written as C projects write it: no pragma, the sizes in a struct,
 * row pointers and index scalars. `polytune optimize smooth.c` finds the nest, reads im->h, im->w and
 * im->steps once before it, resolves the row pointers to src and dst, and time-tiles the sweeps. */
#include <stdio.h>
#include <stdlib.h>

#define MAXH 1200
#define MAXW 1200

struct image {
  int h, w;
  int steps;
};

static float src[MAXH][MAXW], dst[MAXH][MAXW];

static void smooth(const struct image *im) {
  for (int t = 0; t < im->steps; t++) {
    for (int y = 1; y < im->h - 1; y++) {
      float *out = dst[y];
      const float *up = src[y - 1], *mid = src[y], *down = src[y + 1];
      for (int x = 1; x < im->w - 1; x++) {
        int left = x - 1, right = x + 1;
        out[x] = 0.2f * (up[x] + down[x] + mid[left] + mid[x] + mid[right]);
      }
    }
    for (int y = 1; y < im->h - 1; y++)
      for (int x = 1; x < im->w - 1; x++)
        src[y][x] = dst[y][x];
  }
}

int main(int argc, char **argv) {
  struct image im = {argc > 1 ? atoi(argv[1]) : MAXH, argc > 2 ? atoi(argv[2]) : MAXW, argc > 3 ? atoi(argv[3]) : 20};
  for (int y = 0; y < im.h; y++)
    for (int x = 0; x < im.w; x++)
      src[y][x] = (float)((y * 7 + x * 3) % 17);
  smooth(&im);
  double sum = 0;
  for (int y = 0; y < im.h; y++)
    for (int x = 0; x < im.w; x++)
      sum += src[y][x] * ((x + y) % 5);
  printf("%.9g\n", sum);
  return 0;
}
