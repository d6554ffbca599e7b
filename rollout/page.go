package rollout

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chartColors are the lines of the versions of a language, in version
// order.
var chartColors = []string{"#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700"}

// chart is one small chart: a metric of every version of a language.
type chart struct {
	Title string
	Lines []chartLine
}

// chartLine is one version's line.
type chartLine struct {
	Version, Color string
	// Points is the SVG polyline ("x,y x,y ..."), in a 160×40 box.
	Points string
	// Latest is the last value, formatted.
	Latest string
}

const chartW, chartH = 160, 40

// charts turns a language's series into its four charts: request rate,
// error rate, p50 and p99 latency. Versions share a chart's scale.
func charts(series []Series) []chart {
	metrics := []struct {
		title  string
		value  func(Point) (float64, bool)
		format func(float64) string
	}{
		{"requests/s", func(p Point) (float64, bool) { return p.Rate, true }, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }},
		{"error rate", ptr(func(p Point) *float64 { return p.ErrorRate }), func(v float64) string { return strconv.FormatFloat(100*v, 'f', 2, 64) + " %" }},
		{"p50 latency", ptr(func(p Point) *float64 { return p.P50 }), seconds},
		{"p99 latency", ptr(func(p Point) *float64 { return p.P99 }), seconds},
	}
	var start, end time.Time
	for _, s := range series {
		for _, p := range s.Points {
			if start.IsZero() || p.At.Before(start) {
				start = p.At
			}
			if p.At.After(end) {
				end = p.At
			}
		}
	}
	span := end.Sub(start).Seconds()
	out := make([]chart, 0, len(metrics))
	for _, m := range metrics {
		top := 0.0
		for _, s := range series {
			for _, p := range s.Points {
				if v, ok := m.value(p); ok {
					top = math.Max(top, v)
				}
			}
		}
		c := chart{Title: m.title}
		for i, s := range series {
			var pts []string
			latest := "–"
			for _, p := range s.Points {
				v, ok := m.value(p)
				if !ok {
					continue
				}
				x := 0.0
				if span > 0 {
					x = chartW * p.At.Sub(start).Seconds() / span
				}
				y := float64(chartH)
				if top > 0 {
					y = chartH - (chartH-2)*v/top
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
				latest = m.format(v)
			}
			c.Lines = append(c.Lines, chartLine{Version: s.Version, Color: chartColors[i%len(chartColors)],
				Points: strings.Join(pts, " "), Latest: latest})
		}
		out = append(out, c)
	}
	return out
}

func ptr(f func(Point) *float64) func(Point) (float64, bool) {
	return func(p Point) (float64, bool) {
		if v := f(p); v != nil {
			return *v, true
		}
		return 0, false
	}
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"plus1":  func(i int) int { return i + 1 },
	"charts": charts,
	"time":   func(t time.Time) string { return t.UTC().Format("15:04:05") },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<noscript><meta http-equiv="refresh" content="5"></noscript>
<title>fleetkit machine manager</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.8em; text-align: left; }
th { background: #f4f4f4; }
.ok { color: #1a7f37; } .bad { color: #cf222e; font-weight: bold; }
.steps span { padding: 0.1em 0.5em; margin-right: 0.2em; border: 1px solid #ccc; border-radius: 3px; }
.steps .now { background: #0969da; color: white; border-color: #0969da; }
.charts { display: flex; gap: 1.5em; flex-wrap: wrap; margin: 0.5em 0 1em; }
.charts figure { margin: 0; } .charts figcaption { font-size: 0.85em; color: #444; }
.charts svg { border: 1px solid #ddd; background: #fafafa; }
.verdict-pass { color: #1a7f37; } .verdict-fail { color: #cf222e; font-weight: bold; } .verdict-running, .verdict-waiting { color: #8a6d00; }
.actions button { margin-right: 0.5em; }
#result { min-height: 1.2em; }
small { color: #666; }
</style>
</head>
<body>
<h1>Machine manager</h1>
<p><small>JSON at <a href="status">/status</a> and <a href="history">/history</a> · updates every 2 s</small></p>
<p class="actions"><label>API secret <input id="secret" type="password" autocomplete="off" placeholder="{{if .SecretNeeded}}required for the buttons{{else}}none needed{{end}}"></label>
<span id="result" role="status"></span></p>
<main id="fleet">
<p><small id="now">{{.Now}}</small></p>
{{range .Status.Languages}}
<section class="lang" data-lang="{{.Language}}" data-step="{{.Step}}" data-current="{{.Phase.Current}}" data-target="{{.Phase.Target}}">
<h2>{{.Language}}</h2>
{{if .Phase.Updating}}
<p>Updating <b>{{.Phase.Current}}</b> → <b>{{.Phase.Target}}</b>: step {{.Step}} of {{len .Steps}}, {{.Percent}}% of traffic to {{.Phase.Target}}.</p>
<p class="steps">{{$cur := .Step}}{{range $i, $p := .Steps}}<span{{if eq (plus1 $i) $cur}} class="now"{{end}}>{{$p}}%</span>{{end}}</p>
{{else if .Phase.Previous}}
<p>Running <b>{{.Phase.Current}}</b> (update from {{.Phase.Previous}} complete).</p>
{{else if .Phase.Current}}
<p>Running <b>{{.Phase.Current}}</b>; no update in progress.</p>
{{end}}
<p>{{.Desired}} machine(s) wanted.</p>
<p class="actions">{{if .Phase.Updating}}<button data-op="update" data-lang="{{.Language}}">Promote</button><button data-op="abort" data-lang="{{.Language}}">Abort</button>{{end}}{{if or .Phase.Updating .Phase.Previous}}<button data-op="rollback" data-lang="{{.Language}}">Roll back</button>{{end}}</p>
{{if .Series}}
<div class="charts">{{range charts .Series}}
<figure><figcaption>{{.Title}}: {{range .Lines}}<span style="color:{{.Color}}">{{.Version}} {{.Latest}}</span> {{end}}</figcaption>
<svg width="160" height="40" viewBox="0 0 160 40" role="img" aria-label="{{.Title}}">{{range .Lines}}<polyline class="series" data-version="{{.Version}}" fill="none" stroke="{{.Color}}" stroke-width="1.5" points="{{.Points}}"/>{{end}}</svg>
</figure>{{end}}
</div>
{{end}}
{{if .Verdicts}}
<h3>Analysis</h3>
<table class="verdicts">
<tr><th>Step</th><th>Version</th><th>Verdict</th><th>Why</th><th>Judged</th></tr>
{{range .Verdicts}}<tr><td>{{.Step}} ({{.Percent}}%)</td><td>{{.From}} → {{.Version}}</td><td class="verdict-{{.Result}}">{{.Result}}</td><td>{{.Reason}}</td><td>{{time .At}} UTC</td></tr>
{{end}}</table>
{{end}}
{{range .Versions}}
<h3>Version {{.Version}} <small>traffic weight {{.Weight}}</small></h3>
<table>
<tr><th>Address</th><th>Health</th><th>Requests</th><th>In balancer</th><th>Machine</th></tr>
{{range .Machines}}<tr>
<td>{{.Address}}</td>
<td>{{if .Healthy}}<span class="ok">healthy</span>{{else}}<span class="bad">unhealthy</span> <small>{{.Reason}}</small>{{end}}</td>
<td>{{.RequestCount}}</td>
<td>{{if .Ejected}}<span class="bad">ejected</span> <small>by the balancer's passive health{{if not .EjectedUntil.IsZero}}, back at {{.EjectedUntil.UTC.Format "15:04:05"}} UTC{{end}}</small>{{else if .Routed}}yes{{else}}no{{end}}</td>
<td><small>{{.ID}}</small></td>
</tr>{{end}}
</table>
{{else}}
<p><small>No machines.</small></p>
{{end}}
</section>
{{end}}
</main>
<script>
"use strict";
(function () {
  const secret = document.getElementById("secret");
  const result = document.getElementById("result");
  secret.value = sessionStorage.getItem("fleetkit-secret") || "";
  secret.addEventListener("change", () => sessionStorage.setItem("fleetkit-secret", secret.value));
  async function refresh() {
    try {
      const r = await fetch(location.pathname, {cache: "no-store"});
      if (!r.ok) return;
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      const fresh = doc.getElementById("fleet");
      if (fresh) document.getElementById("fleet").replaceWith(fresh);
    } catch (e) { /* the next refresh tries again */ }
  }
  document.addEventListener("click", async (ev) => {
    const b = ev.target.closest("button[data-op]");
    if (!b) return;
    b.disabled = true;
    result.textContent = b.textContent + " " + b.dataset.lang + "…";
    const headers = {"Content-Type": "application/json"};
    if (secret.value) headers["X-Secret-Key"] = secret.value;
    try {
      const r = await fetch(b.dataset.op, {method: "POST", headers, body: JSON.stringify({lang: b.dataset.lang})});
      const body = await r.json().catch(() => ({}));
      result.textContent = r.ok ? b.textContent + " " + b.dataset.lang + ": done" : b.textContent + " " + b.dataset.lang + ": " + r.status + " " + (body.message || "");
    } catch (e) {
      result.textContent = b.textContent + " " + b.dataset.lang + ": " + e;
    }
    b.disabled = false;
    refresh();
  });
  setInterval(refresh, 2000);
})();
</script>
</body>
</html>
`))

type pageData struct {
	Now          string
	Status       Status
	SecretNeeded bool
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) error {
	st, err := h.m.Status(r.Context())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	data := pageData{Now: time.Now().UTC().Format(time.RFC3339), Status: st, SecretNeeded: h.secret != nil}
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page runs its own script only; it is never framed.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}
