// Package httpserver runs the HTTP servers of fleetkit's example binaries
// with the same timeouts and the same graceful shutdown.
//
// A panic in a handler is answered 500 and logged to the logger given to
// NewWithLogger; nil (and New) means slog.Default().
//
//	ln, err := httpserver.Listen(":8080")
//	if err != nil {
//		return err
//	}
//	return httpserver.Run(ctx, httpserver.NewWithLogger(mux, logger), ln, 0)
package httpserver
