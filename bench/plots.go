package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var (
	colBatched = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colNaive   = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colMin     = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colBound   = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
)

// writePlots draws the PNGs into dir and returns their file names.
func writePlots(res *Results, dir string) ([]string, error) {
	var files []string
	for _, p := range []struct {
		name string
		draw func(*Results) (*plot.Plot, error)
	}{
		{"latency-vs-concurrency.png", plotSweep},
		{"calls-naive-vs-batched.png", plotCalls},
		{"p50-vs-bound.png", plotBound},
	} {
		pl, err := p.draw(res)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		if pl == nil {
			continue
		}
		if err := pl.Save(20*vg.Centimeter, 12*vg.Centimeter, filepath.Join(dir, p.name)); err != nil {
			return nil, err
		}
		files = append(files, p.name)
	}
	return files, nil
}

// ticks125 returns 1-2-5 ticks covering [lo, hi] (lo > 0), for log axes.
func ticks125(lo, hi float64) plot.ConstantTicks {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo/1.01 && v <= hi*1.01 {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
}

func styleLine(l *plotter.Line, c color.Color, dashed bool) {
	l.Color = c
	l.Width = vg.Points(1.8)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
}

// plotSweep: dashboard p50/p95 against concurrency, batched and naive, with
// the critical-path bound.
func plotSweep(res *Results) (*plot.Plot, error) {
	if len(res.Sweep) == 0 {
		return nil, nil
	}
	p := plot.New()
	lat := res.Sweep[0].LatencyMs
	p.Title.Text = fmt.Sprintf("Location dashboard: latency against concurrency (upstream latency %g ms)", lat)
	p.X.Label.Text = "concurrent clients"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), 0.0
	var xs []float64
	for _, mode := range modes {
		for _, pct := range []string{"p50", "p95"} {
			var pts plotter.XYs
			for _, s := range res.Sweep {
				if s.Mode != mode || s.N == 0 {
					continue
				}
				y := s.P50Ms
				if pct == "p95" {
					y = s.P95Ms
				}
				pts = append(pts, plotter.XY{X: float64(s.Conc), Y: y})
				lo, hi = min(lo, y), max(hi, y)
				if mode == modeBatched && pct == "p50" {
					xs = append(xs, float64(s.Conc))
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			c := colBatched
			if mode == modeNaive {
				c = colNaive
			}
			styleLine(l, c, pct == "p95")
			sc.Color = c
			sc.Shape = draw.CircleGlyph{}
			p.Add(l, sc)
			p.Legend.Add(mode+" "+pct, l, sc)
		}
	}
	if q := findQuery(res, "dashboard"); q != nil && len(xs) > 0 {
		b := float64(q.Rounds) * lat
		if b > 0 {
			l, err := plotter.NewLine(plotter.XYs{{X: xs[0], Y: b}, {X: xs[len(xs)-1], Y: b}})
			if err != nil {
				return nil, err
			}
			styleLine(l, colBound, true)
			l.Width = vg.Points(1)
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("critical path (%d rounds × %g ms)", q.Rounds, lat), l)
			lo = min(lo, b)
		}
	}
	if len(xs) < 2 || lo <= 0 {
		return nil, nil // a log-log plot needs two concurrencies and positive latencies
	}
	var xt []plot.Tick
	for _, x := range xs {
		xt = append(xt, plot.Tick{Value: x, Label: strconv.Itoa(int(x))})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.X.Min, p.X.Max = xs[0]/1.2, xs[len(xs)-1]*1.2
	p.Y.Min, p.Y.Max = lo*0.8, hi*2.5 // room for the legend above the lines
	p.Y.Tick.Marker = ticks125(p.Y.Min, p.Y.Max)
	return p, nil
}

// groupedBars draws one group per query with a bar per series.
func groupedBars(p *plot.Plot, names []string, series []struct {
	label string
	c     color.Color
	vals  plotter.Values
}, format string) error {
	w := vg.Points(14)
	for i, s := range series {
		b, err := plotter.NewBarChart(s.vals, w)
		if err != nil {
			return err
		}
		b.Color = s.c
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(b)
		p.Legend.Add(s.label, b)
		var xys plotter.XYs
		var labels []string
		for j, v := range s.vals {
			xys = append(xys, plotter.XY{X: float64(j), Y: v})
			labels = append(labels, fmt.Sprintf(format, v))
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		for k := range lb.TextStyle {
			lb.TextStyle[k].Font.Size = vg.Points(7)
			lb.TextStyle[k].XAlign = draw.XCenter
		}
		lb.Offset = vg.Point{X: b.Offset, Y: vg.Points(2)}
		p.Add(lb)
	}
	p.NominalX(names...)
	p.Legend.Top = true
	return nil
}

// plotCalls: upstream calls per query: minimum, batched, naive.
func plotCalls(res *Results) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Upstream REST calls per query"
	p.Y.Label.Text = "calls per GraphQL request"
	var names []string
	var mins, bat, nai plotter.Values
	top := 0.0
	for _, q := range res.Queries {
		names = append(names, q.Name)
		mins = append(mins, float64(q.MinCalls))
		b, n := callsAt(q, modeBatched, ""), callsAt(q, modeNaive, "")
		bat = append(bat, float64(b))
		nai = append(nai, float64(n))
		top = max(top, float64(n))
	}
	err := groupedBars(p, names, []struct {
		label string
		c     color.Color
		vals  plotter.Values
	}{{"minimum (from the data)", colMin, mins}, {"batched (the facade)", colBatched, bat}, {"naive (one call per field)", colNaive, nai}}, "%.0f")
	p.Y.Max = top * 1.15
	return p, err
}

// plotBound: p50 at concurrency 1 at the highest latency, against the bound.
func plotBound(res *Results) (*plot.Plot, error) {
	lat := highestLatency(res)
	if lat == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("p50 latency at concurrency 1, upstream latency %g ms", lat)
	p.Y.Label.Text = "ms"
	var names []string
	var bound, bat, nai plotter.Values
	top := 0.0
	for _, q := range res.Queries {
		names = append(names, q.Name)
		bound = append(bound, float64(q.Rounds)*lat)
		b, n := runAt(q, modeBatched, lat, 1), runAt(q, modeNaive, lat, 1)
		bat = append(bat, b.P50Ms)
		nai = append(nai, n.P50Ms)
		top = max(top, b.P50Ms, n.P50Ms)
	}
	err := groupedBars(p, names, []struct {
		label string
		c     color.Color
		vals  plotter.Values
	}{{"critical-path bound", colBound, bound}, {"batched p50", colBatched, bat}, {"naive p50", colNaive, nai}}, "%.1f")
	p.Y.Max = top * 1.15
	return p, err
}
