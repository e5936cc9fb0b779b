hs = {status = "Healthy"
local x = = 1
return hs
