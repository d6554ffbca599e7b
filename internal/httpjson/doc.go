// Package httpjson holds the JSON plumbing shared by fleetkit's HTTP
// handlers: size-limited decoding that maps every failure to a status code,
// and one error body shape, {"status":"error","message":"..."}.
//
// Recover and RecoverWith log a handler's panic to the logger they are
// given; nil means slog.Default(). Nothing else in the package logs.
//
//	var req createRequest
//	if err := httpjson.Decode(w, r, &req, httpjson.DecodeOptions{}); err != nil {
//		httpjson.WriteError(w, err)
//		return
//	}
//	httpjson.Write(w, http.StatusCreated, created)
package httpjson
