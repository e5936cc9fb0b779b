local cm(n) = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } };
[cm('one'), [cm('two'), cm('three')], null, cm('four')]
