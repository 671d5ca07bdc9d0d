package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Chart layout, pixels.
const (
	chartW      = 1200
	panelH      = 400
	panelGap    = 70
	chartTop    = 50
	plotLeft    = 90
	plotRight   = chartW - 30
	legendWidth = 150
)

var (
	colBackground = color.RGBA{255, 255, 255, 255}
	colAxis       = color.RGBA{60, 60, 60, 255}
	colGrid       = color.RGBA{225, 225, 225, 255}
	colText       = color.RGBA{20, 20, 20, 255}
	targetColors  = map[string]color.RGBA{
		TargetDirect:       {120, 120, 120, 255},
		TargetSplice:       {31, 119, 180, 255},
		TargetCopy:         {44, 160, 44, 255},
		TargetKproxy:       {214, 39, 40, 255},
		TargetKproxyPolicy: {255, 127, 14, 255},
		TargetKproxyQuotas: {23, 190, 207, 255},
		TargetKproxyTraced: {188, 189, 34, 255},
		TargetTLSRelay:     {148, 103, 189, 255},
		TargetKproxyTLS:    {140, 86, 75, 255},
		TargetKproxySNI:    {227, 119, 194, 255},
	}
)

// canvas is an RGBA image with the few drawing operations the chart needs.
type canvas struct{ *image.RGBA }

func (c canvas) rect(x0, y0, x1, y1 int, col color.Color) {
	draw.Draw(c.RGBA, image.Rect(x0, y0, x1, y1), image.NewUniform(col), image.Point{}, draw.Src)
}

// text draws s with its baseline at y, starting at x; align is -1 (left), 0
// (centre) or 1 (right).
func (c canvas) text(x, y int, s string, col color.Color, align int) {
	d := font.Drawer{Dst: c.RGBA, Src: image.NewUniform(col), Face: basicfont.Face7x13}
	w := d.MeasureString(s).Round()
	switch align {
	case 0:
		x -= w / 2
	case 1:
		x -= w
	}
	d.Dot = fixed.P(x, y)
	d.DrawString(s)
}

// line draws a line of the given width by stamping squares along it.
func (c canvas) line(x0, y0, x1, y1 float64, width int, col color.Color) {
	steps := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))*2) + 1
	h := width / 2
	for i := 0; i <= steps; i++ {
		t := float64(i) / float64(steps)
		x := int(math.Round(x0 + t*(x1-x0)))
		y := int(math.Round(y0 + t*(y1-y0)))
		c.rect(x-h, y-h, x-h+width, y-h+width, col)
	}
}

// niceCeil rounds v up to a round multiple of a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// WritePNG draws the report: throughput per load and target, proxy CPU per
// GiB, and the latency CDF.
func (r *Report) WritePNG(path string) error {
	var tput []*LoadResult
	var lat *LoadResult
	for _, lr := range r.Loads {
		if lr.Kind == "latency" {
			lat = lr
		} else {
			tput = append(tput, lr)
		}
	}
	var targets []string
	for _, t := range r.Targets {
		if !t.Skipped {
			targets = append(targets, t.Name)
		}
	}
	h := chartTop + 3*(panelH+panelGap)
	c := canvas{image.NewRGBA(image.Rect(0, 0, chartW, h))}
	c.rect(0, 0, chartW, h, colBackground)
	title := fmt.Sprintf("kproxy-bench  %s  %s  %d CPUs, %d rounds x %s, medians",
		r.Meta.Started.Format("2006-01-02 15:04 UTC"), r.Meta.GoVersion, r.Meta.CPUs, r.Meta.Rounds, r.Meta.Duration)
	c.text(chartW/2, 25, title, colText, 0)

	top := chartTop
	c.bars(top, "throughput, MB/s (higher is better)", tput, targets, func(s *Sample) (float64, bool) { return s.MBps, true }, "%.0f")
	top += panelH + panelGap
	var proxies []string
	for _, t := range targets {
		if t != TargetDirect {
			proxies = append(proxies, t)
		}
	}
	c.bars(top, "proxy CPU-seconds per GiB moved (lower is better)", tput, proxies, func(s *Sample) (float64, bool) {
		if s.ProxyCPUPerGiB == nil {
			return 0, false
		}
		return *s.ProxyCPUPerGiB, true
	}, "%.2f")
	top += panelH + panelGap
	c.cdf(top, lat, targets)

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, c.RGBA); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// legend draws one colour box per target at the panel's top right.
func (c canvas) legend(top int, targets []string) {
	x := plotRight - legendWidth + 10
	for i, t := range targets {
		y := top + 15 + i*18
		c.rect(x, y-10, x+12, y+2, targetColors[t])
		c.text(x+18, y, t, colText, -1)
	}
}

func (c canvas) bars(top int, title string, loads []*LoadResult, targets []string, value func(*Sample) (float64, bool), format string) {
	left, right := plotLeft, plotRight-legendWidth
	bottom := top + panelH - 40
	c.text(left, top-8, title, colText, -1)
	c.legend(top, targets)
	if len(loads) == 0 || len(targets) == 0 {
		c.text((left+right)/2, (top+bottom)/2, "no data", colText, 0)
		return
	}
	maxV := 0.0
	for _, lr := range loads {
		for _, t := range targets {
			if res := lr.Result(t); res != nil && res.Median != nil {
				if v, ok := value(res.Median); ok {
					maxV = math.Max(maxV, v)
				}
			}
		}
	}
	ymax := niceCeil(maxV * 1.08)
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		y := bottom - int(float64(bottom-top-20)*float64(i)/5)
		c.rect(left, y, right, y+1, colGrid)
		c.text(left-6, y+4, trimFloat(v), colText, 1)
	}
	groupW := float64(right-left) / float64(len(loads))
	barW := groupW * 0.8 / float64(len(targets))
	for gi, lr := range loads {
		gx := float64(left) + float64(gi)*groupW + groupW*0.1
		for ti, t := range targets {
			res := lr.Result(t)
			if res == nil || res.Median == nil {
				continue
			}
			v, ok := value(res.Median)
			if !ok {
				continue
			}
			x0 := int(gx + float64(ti)*barW)
			x1 := int(gx + float64(ti+1)*barW - 2)
			y := bottom - int(float64(bottom-top-20)*v/ymax)
			c.rect(x0, y, x1, bottom, targetColors[t])
			c.text((x0+x1)/2, y-4, fmt.Sprintf(format, v), colText, 0)
		}
		label := lr.Name
		if lr.RateMBps > 0 {
			label = fmt.Sprintf("%s @ %.0f MB/s", lr.Name, lr.RateMBps)
		}
		c.text(int(gx+groupW*0.4), bottom+18, label, colText, 0)
	}
	c.rect(left, bottom, right, bottom+1, colAxis)
	c.rect(left, top, left+1, bottom, colAxis)
}

// cdf draws each target's latency CDF on a log-scale time axis.
func (c canvas) cdf(top int, lr *LoadResult, targets []string) {
	left, right := plotLeft, plotRight-legendWidth
	bottom := top + panelH - 40
	c.text(left, top-8, "produce round-trip latency CDF (x: log scale; y: fraction of requests at or below x)", colText, -1)
	c.legend(top, targets)
	if lr == nil {
		c.text((left+right)/2, (top+bottom)/2, "no latency load", colText, 0)
		return
	}
	lo, hi := math.Inf(1), 0.0
	for _, res := range lr.Results {
		for _, p := range res.CDF {
			if p.US > 0 {
				lo, hi = math.Min(lo, p.US), math.Max(hi, p.US)
			}
		}
	}
	if hi == 0 {
		c.text((left+right)/2, (top+bottom)/2, "no data", colText, 0)
		return
	}
	// Decades around the data, with 1-2-5 ticks.
	x0 := math.Floor(math.Log10(lo))
	x1 := math.Ceil(math.Log10(hi))
	if x1 <= x0 {
		x1 = x0 + 1
	}
	px := func(us float64) float64 {
		return float64(left) + (math.Log10(us)-x0)/(x1-x0)*float64(right-left)
	}
	py := func(q float64) float64 { return float64(bottom) - q*float64(bottom-top-20) }
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 0.9, 1} {
		y := int(py(q))
		c.rect(left, y, right, y+1, colGrid)
		c.text(left-6, y+4, trimFloat(q), colText, 1)
	}
	for d := x0; d < x1+0.5; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if math.Log10(v) > x1+1e-9 {
				break
			}
			x := int(px(v))
			c.rect(x, top+20, x+1, bottom, colGrid)
			c.text(x, bottom+16, durLabel(v), colText, 0)
		}
	}
	for _, t := range targets {
		res := lr.Result(t)
		if res == nil {
			continue
		}
		var prevX, prevY float64
		for i, p := range res.CDF {
			if p.US <= 0 {
				continue
			}
			x, y := px(p.US), py(p.Q)
			if i > 0 {
				// Step: right at the previous fraction, then up.
				c.line(prevX, prevY, x, prevY, 2, targetColors[t])
				c.line(x, prevY, x, y, 2, targetColors[t])
			}
			prevX, prevY = x, y
		}
	}
	c.rect(left, bottom, right, bottom+1, colAxis)
	c.rect(left, top+20, left+1, bottom, colAxis)
}

// durLabel writes microseconds as a short duration: 50us, 2ms, 1s.
func durLabel(us float64) string {
	switch {
	case us >= 1e6:
		return trimFloat(us/1e6) + "s"
	case us >= 1e3:
		return trimFloat(us/1e3) + "ms"
	}
	return trimFloat(us) + "us"
}

func trimFloat(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
