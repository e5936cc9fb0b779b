{ helper(x):: 'helped-' + x }
