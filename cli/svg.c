/* Hand-written SVG charts: hisp solve --plot's convergence history (relative
 * residual on a log10 axis against the iteration) and hisp bench --plot's
 * bar chart (one bar per backend and device). */
#include "solve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { W = 760, H = 470, LEFT = 86, RIGHT = 28, TOP = 66, BOTTOM = 62 };

static void text_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A round step (1, 2 or 5 times a power of ten) giving at most about `most`
 * intervals over [0, span]. */
static double round_step(double span, int most)
{
    double raw = span / most, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double step = mag;
    if (raw > 5 * mag)
        step = 10 * mag;
    else if (raw > 2 * mag)
        step = 5 * mag;
    else if (raw > mag)
        step = 2 * mag;
    return step;
}

/* The same, at least 1 (iterations). */
static double nice_step(double span, int most)
{
    double step = round_step(span, most);
    return step < 1 ? 1 : step;
}

/* The <svg> element, white background, title and subtitle. */
static void header(FILE *f, int w, int h, int left, const char *title, const char *subtitle)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
            "font-size=\"13\" fill=\"#222\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
    fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"16\" font-weight=\"bold\">", left);
    text_escaped(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"46\" fill=\"#555\">", left);
    text_escaped(f, subtitle);
    fputs("</text>\n", f);
}

/* Ends the document in f (a memstream over *buf, *len: valid after the
 * fclose) and writes it to path. */
static int finish(FILE *f, char **buf, size_t *len, const char *path)
{
    fputs("</svg>\n", f);
    int bad = ferror(f);
    int rc = fclose(f) != 0 || bad ? cli_value_error("%s: out of host memory", path)
                                   : cli_write_text(path, *buf, *len);
    free(*buf);
    return rc;
}

typedef struct {
    double x0, x1, y0, y1; /* data ranges: iterations, log10 of the relative residual */
} frame;

static double px(const frame *fr, double it)
{
    return LEFT + (it - fr->x0) / (fr->x1 - fr->x0) * (W - LEFT - RIGHT);
}

static double py(const frame *fr, double lg)
{
    return TOP + (fr->y1 - lg) / (fr->y1 - fr->y0) * (H - TOP - BOTTOM);
}

/* The curve as polylines, broken where a value is not finite; an exact zero
 * sits on the bottom axis. */
static void curve(FILE *f, const frame *fr, const cli_history *h)
{
    bool open = false;
    for (size_t i = 0; i < h->n; i++) {
        double r = h->rel[i];
        if (!isfinite(r) || r < 0) {
            if (open) fputs("\"/>\n", f);
            open = false;
            continue;
        }
        double lg = r > 0 ? fmax(log10(r), fr->y0) : fr->y0;
        if (!open)
            fputs("<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"1.8\" "
                  "stroke-linejoin=\"round\" points=\"",
                  f);
        fprintf(f, "%s%.2f,%.2f", open ? " " : "", px(fr, (double)h->it[i]), py(fr, lg));
        open = true;
    }
    if (open) fputs("\"/>\n", f);
    if (h->n <= 80) /* few iterations: mark each */
        for (size_t i = 0; i < h->n; i++) {
            double r = h->rel[i];
            if (!isfinite(r) || r < 0) continue;
            double lg = r > 0 ? fmax(log10(r), fr->y0) : fr->y0;
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.4\" fill=\"#1f5fa8\"/>\n",
                    px(fr, (double)h->it[i]), py(fr, lg));
        }
}

static void axes(FILE *f, const frame *fr, double xstep, int ystep)
{
    double x_left = LEFT, x_right = W - RIGHT, y_top = TOP, y_bottom = H - BOTTOM;
    /* minor grid: 2..9 times each decade when the decades are few */
    if (ystep == 1 && fr->y1 - fr->y0 <= 8)
        for (double d = fr->y0; d < fr->y1; d++)
            for (int m = 2; m <= 9; m++) {
                double y = py(fr, d + log10(m));
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" "
                        "stroke=\"#eeeeee\"/>\n",
                        x_left, y, x_right, y);
            }
    /* decades: grid, tick and label 10^d */
    for (double d = fr->y0; d <= fr->y1 + 1e-9; d += ystep) {
        double y = py(fr, d);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#d8d8d8\"/>\n"
                "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#333\"/>\n",
                x_left, y, x_right, y, x_left - 5, y, x_left, y);
        int e = (int)lround(d);
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">10<tspan dy=\"-7\" "
                "font-size=\"10\">%s%d</tspan></text>\n",
                x_left - 8, y + 4.5, e < 0 ? "\xe2\x88\x92" : "", e < 0 ? -e : e);
    }
    /* iterations */
    for (double it = fr->x0; it <= fr->x1 + 1e-9; it += xstep) {
        double x = px(fr, it);
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#ececec\"/>\n"
                "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#333\"/>\n"
                "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n",
                x, y_top, x, y_bottom, x, y_bottom, x, y_bottom + 5, x, y_bottom + 20, it);
    }
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#333\"/>\n",
            x_left, y_top, x_right - x_left, y_bottom - y_top);
}

int cli_plot_convergence(const char *path, const cli_history *h, const char *title,
                         const char *subtitle, const char *ylabel, double tol)
{
    /* ranges: whole decades around the finite positive values and the
     * tolerance; iterations from 0 to a round number */
    double lo = INFINITY, hi = -INFINITY;
    int64_t last = 1;
    for (size_t i = 0; i < h->n; i++) {
        if (h->it[i] > last) last = h->it[i];
        double r = h->rel[i];
        if (isfinite(r) && r > 0) {
            lo = fmin(lo, log10(r));
            hi = fmax(hi, log10(r));
        }
    }
    if (isfinite(tol) && tol > 0) {
        lo = fmin(lo, log10(tol));
        hi = fmax(hi, log10(tol));
    }
    if (!isfinite(lo)) lo = hi = 0;
    frame fr = {0, 0, floor(lo), ceil(hi)};
    if (fr.y1 - fr.y0 < 1) fr.y1 = fr.y0 + 1;
    fr.y0 = fmax(fr.y0, -330); /* below the smallest double */
    int ystep = (int)ceil((fr.y1 - fr.y0) / 10);
    fr.y1 = fr.y0 + ystep * ceil((fr.y1 - fr.y0) / ystep);
    double xstep = nice_step((double)last, 8);
    fr.x1 = xstep * ceil((double)last / xstep);

    cli_progress("writing %s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return cli_value_error("%s: %s", path, strerror(errno));
    header(f, W, H, LEFT, title, subtitle);
    axes(f, &fr, xstep, ystep);
    if (isfinite(tol) && tol > 0) {
        double y = py(&fr, log10(tol));
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#c0392b\" "
                "stroke-width=\"1.4\" stroke-dasharray=\"7,5\"/>\n"
                "<text x=\"%d\" y=\"%.2f\" fill=\"#c0392b\" "
                "font-size=\"12\">tolerance %.3g</text>\n",
                LEFT, y, W - RIGHT, y, LEFT + 6, y - 6, tol);
    }
    curve(f, &fr, h);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">iteration</text>\n",
            LEFT + (W - LEFT - RIGHT) / 2.0, H - 18);
    fprintf(f,
            "<text transform=\"translate(22,%.1f) rotate(-90)\" "
            "text-anchor=\"middle\">",
            TOP + (H - TOP - BOTTOM) / 2.0);
    text_escaped(f, ylabel);
    fputs("</text>\n", f);
    return finish(f, &buf, &len, path);
}

int cli_plot_bars(const char *path, const char *title, const char *subtitle, const char *xlabel,
                  int n, const char *const *labels, const double *values)
{
    enum { BW = 860, BLEFT = 330, BRIGHT = 90, BTOP = 70, ROW = 28, BAR = 18 };
    int h = BTOP + (n > 0 ? n : 1) * ROW + 64;
    double hi = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(values[i]) && values[i] > hi) hi = values[i];
    double step = round_step(hi > 0 ? hi : 1, 6), top = step * ceil((hi > 0 ? hi : 1) / step);
    double x0 = BLEFT, x1 = BW - BRIGHT, yb = BTOP + n * ROW + 6;

    cli_progress("writing %s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return cli_value_error("%s: %s", path, strerror(errno));
    header(f, BW, h, 16, title, subtitle);
    for (double v = 0; v <= top * (1 + 1e-9); v += step) { /* grid and ticks */
        double x = x0 + v / top * (x1 - x0);
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n"
                "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                x, BTOP - 4, x, yb, x, yb + 18, v);
    }
    for (int i = 0; i < n; i++) {
        double y = BTOP + i * ROW + (ROW - BAR) / 2.0;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", BLEFT - 8, y + BAR - 4);
        text_escaped(f, labels[i]);
        fputs("</text>\n", f);
        if (!isfinite(values[i])) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#888\">skipped</text>\n", x0 + 6,
                    y + BAR - 4);
            continue;
        }
        double w = fmax(values[i], 0) / top * (x1 - x0);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"#1f5fa8\"/>\n"
                "<text x=\"%.2f\" y=\"%.1f\">%.4g</text>\n",
                x0, y, w, BAR, x0 + w + 5, y + BAR - 4, values[i]);
    }
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n"
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
            x0, BTOP - 4, x0, yb, x0, yb, x1, yb);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", (x0 + x1) / 2, h - 14);
    text_escaped(f, xlabel);
    fputs("</text>\n", f);
    return finish(f, &buf, &len, path);
}
