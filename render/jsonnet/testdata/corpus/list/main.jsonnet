{ apiVersion: 'v1', kind: 'List', items: [ { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa-%d' % i } } for i in std.range(1, 3) ] }
