local mixin = (import 'github.com/acme/mixin/mixin.libsonnet') + { _config+:: { selector: 'job="node-exporter"' } };
assert std.length(mixin.prometheusAlerts.groups) == 1 : 'one group';
{
  rules: { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'node', namespace: 'monitoring' }, spec: mixin.prometheusAlerts },
  dashboards: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dash' }, data: { 'd.json': std.manifestJsonEx({ title: 'Nodes', panels: [{ id: i, sorted: std.sort([3, 1, 2]) } for i in std.range(1, 2)] }, '  ') } },
}
