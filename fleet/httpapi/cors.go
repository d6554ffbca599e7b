package httpapi

import (
	"net/http"
	"slices"
	"strings"
)

// corsMaxAge is how long a browser may cache a preflight answer (seconds).
const corsMaxAge = "600"

// cors lets browser clients on the allowed origins call the API: answers
// carry Access-Control-Allow-Origin for them, and their preflight requests
// are answered here. Other origins get no CORS headers, so browsers keep
// refusing them; non-browser clients are unaffected either way.
func (s *Handler) cors(h http.Handler) http.Handler {
	if len(s.opts.AllowedOrigins) == 0 {
		return h
	}
	anyOrigin := slices.Contains(s.opts.AllowedOrigins, "*")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || (!anyOrigin && !slices.Contains(s.opts.AllowedOrigins, origin)) {
			h.ServeHTTP(w, r)
			return
		}
		hd := w.Header()
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Access-Control-Expose-Headers", "X-Operation-Id")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", strings.Join([]string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodOptions}, ", "))
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			hd.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}
