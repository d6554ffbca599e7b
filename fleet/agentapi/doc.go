// Package agentapi is the control plane's side of the agent data plane:
// the HTTP API the agent of each data-plane cluster calls (fleet-agent),
// per kind, under <kind BasePath>/agent-clusters:
//
//	GET  {id}                 the cluster's spec
//	GET  {id}/<plural>        the desired instances placed on it (ETag; long-poll
//	                          with If-None-Match and ?wait=<duration>, at most 60s)
//	PUT  {id}/<plural>/status the agent's complete report of the instances it runs
//	PUT  {id}/status          the agent's heartbeat (phase, capacity, version)
//
// Every call carries a cluster token (Token): HMAC-SHA256 of
// "<kind>/<cluster ID>" under the manager's agent secret, which grants
// that one cluster. A missing or invalid token is 401, a token of another
// cluster 403, an unknown cluster 404, in the API's error shape. Reports are
// written to the Store (fleet.AgentReports), where fleet/agentplane reads
// them: any replica may serve the API.
//
// A Handler is safe for concurrent use. Long-polls are bounded: each waits
// at most 60 s, polling the store, and at most Options.MaxWaiters wait at
// once (the others are answered 503 with Retry-After).
//
//	h, err := agentapi.New(store, agentapi.Options{Kind: fleet.Dinosaur, Secret: secret})
//	mux.Handle(fleet.Dinosaur.BasePath()+"/agent-clusters/", h)
package agentapi
