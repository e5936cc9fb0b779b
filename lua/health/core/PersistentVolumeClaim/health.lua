-- A PersistentVolumeClaim is healthy once a volume is bound to it.
hs = {}
local phase = obj.status ~= nil and obj.status.phase or nil
if phase == "Bound" then
  hs.status = "Healthy"
  hs.message = "Bound to volume " .. (obj.spec.volumeName or "")
elseif phase == "Lost" then
  hs.status = "Degraded"
  hs.message = "The bound volume " .. (obj.spec.volumeName or "") .. " no longer exists"
else
  hs.status = "Progressing"
  hs.message = "Waiting for a volume to be bound"
end
return hs
