hs = {status = "Healthy"}
return hs
