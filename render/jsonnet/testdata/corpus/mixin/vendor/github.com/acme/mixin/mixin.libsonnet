{
  _config+:: { selector: 'job="node"', alertLabels: { severity: 'warning' } },
  prometheusAlerts+:: {
    groups+: [{
      name: 'node',
      rules: [
        { alert: 'NodeDown', expr: 'up{%(selector)s} == 0' % $._config, 'for': '5m', labels: $._config.alertLabels },
        { alert: 'NodeFull', expr: 'node_filesystem_avail_bytes{%(selector)s} < 1e9' % $._config, labels: $._config.alertLabels { severity: 'critical' } },
      ],
    }],
  },
}
