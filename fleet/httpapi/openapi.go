package httpapi

import _ "embed"

// openapiTemplate is the OpenAPI 3 document of the API, with {{plural}},
// {{name}}, {{Display}}, {{base}}, {{root}} (base without the version),
// {{prefix}}, {{host}} (Kind.HostField) and
// {{statuses}} (fleet.Statuses) filled in per kind.
//
//go:embed openapi.yaml
var openapiTemplate string
