package status

// HealthCheck is the outcome of one Lua health check of an alert
// (alerts/<name>.yaml spec.healthChecks) on a cluster in its last pass.
type HealthCheck struct {
	// Alert is the alert's ID: its name, or <tenant>/<name>.
	Alert string `json:"alert" yaml:"alert"`
	Check string `json:"check" yaml:"check"`
	// Tenant is the tenant whose alert it is; empty for the platform's.
	Tenant string `json:"tenant,omitempty" yaml:"tenant,omitempty"`
	// Objects is how many objects the check's selectors listed.
	Objects int `json:"objects" yaml:"objects"`
	// Truncated is set when a selector listed more than it may
	// (spec.MaxHealthCheckObjects): the check saw the first ones only.
	Truncated bool `json:"truncated,omitempty" yaml:"truncated,omitempty"`
	// Degraded counts the resources the script reported Degraded.
	Degraded int `json:"degraded" yaml:"degraded"`
	// Resources are the first resources reported not Healthy (Degraded
	// first), at most MaxHealthCheckResources.
	Resources []ResourceHealth `json:"resources,omitempty" yaml:"resources,omitempty"`
	// Error says why the check could not run (a list refused, a script
	// error with its line); the check then reports nothing else.
	Error string `json:"error,omitempty" yaml:"error,omitempty"`
}

// ResourceHealth is one resource a health check reported.
type ResourceHealth struct {
	// Object is "Kind namespace/name" or "Kind name".
	Object  string `json:"object" yaml:"object"`
	Status  string `json:"status" yaml:"status"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
}

// MaxHealthCheckResources is how many resources a HealthCheck record
// names.
const MaxHealthCheckResources = 10
