{ only: 'lib1' }
