hs = {}
if obj.status == nil then
  hs.status = "Progressing"
else
  hs.status = "Healthy"
return hs
