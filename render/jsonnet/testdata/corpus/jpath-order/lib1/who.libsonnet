{ who: 'lib1' }
