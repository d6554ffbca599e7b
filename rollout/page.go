package rollout

import (
	"bytes"
	"html/template"
	"net/http"
	"time"
)

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"plus1": func(i int) int { return i + 1 },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="5">
<title>fleetkit machine manager</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.8em; text-align: left; }
th { background: #f4f4f4; }
.ok { color: #1a7f37; } .bad { color: #cf222e; font-weight: bold; }
.steps span { padding: 0.1em 0.5em; margin-right: 0.2em; border: 1px solid #ccc; border-radius: 3px; }
.steps .now { background: #0969da; color: white; border-color: #0969da; }
small { color: #666; }
</style>
</head>
<body>
<h1>Machine manager</h1>
<p><small>{{.Now}} · refreshes every 5 s · JSON at <a href="status">/status</a></small></p>
{{range .Status.Languages}}
<h2>{{.Language}}</h2>
{{if .Phase.Updating}}
<p>Updating <b>{{.Phase.Current}}</b> → <b>{{.Phase.Target}}</b>: step {{.Step}} of {{len .Steps}}, {{.Percent}}% of traffic to {{.Phase.Target}}.</p>
<p class="steps">{{$cur := .Step}}{{range $i, $p := .Steps}}<span{{if eq (plus1 $i) $cur}} class="now"{{end}}>{{$p}}%</span>{{end}}</p>
{{else if .Phase.Previous}}
<p>Running <b>{{.Phase.Current}}</b> (update from {{.Phase.Previous}} complete).</p>
{{else if .Phase.Current}}
<p>Running <b>{{.Phase.Current}}</b>; no update in progress.</p>
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
{{end}}
</body>
</html>
`))

type pageData struct {
	Now    string
	Status Status
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) error {
	st, err := h.m.Status(r.Context())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, pageData{Now: time.Now().UTC().Format(time.RFC3339), Status: st}); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}
