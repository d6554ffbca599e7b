package gitops

// FluxKustomization is fluxKustomization, for the external tests.
var FluxKustomization = fluxKustomization
