{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'numbers', annotations: { n: std.toString(1 / 3) } },
  data: { big: std.toString(9007199254740993), exp: std.toString(1e21), neg: std.toString(-0.5) },
  extra: { int: 42, float: 2.5, big: 12345678901234, tiny: 1e-7, huge: 1e300, neg: -3, zero: 0, half: 0.5, third: 1 / 3 } }
