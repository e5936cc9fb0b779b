{ who: 'lib2' }
