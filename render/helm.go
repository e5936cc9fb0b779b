package render

import (
	"context"
	"errors"
)

// TEMPORARY until render/helm lands.
func (a *addonRender) renderHelm(ap *addonPlan, field string) ([]Step, error) {
	return nil, errors.New("helm: not available")
}

func (r *Renderer) withChart(ctx context.Context, p *plan, ap *addonPlan, k string) (string, error) {
	return k, nil
}
