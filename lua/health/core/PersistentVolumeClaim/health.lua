-- PersistentVolumeClaim.
-- Healthy once bound to a volume, Degraded when the bound volume is lost or
-- a resize failed, Progressing while waiting for a volume. A claim whose
-- storage class binds on first use (WaitForFirstConsumer) stays Pending
-- until a pod uses it: apply the pod in the same wave, or health-check it
-- with a script of your own.
hs = {}
local status = obj.status or {}
local volume = obj.spec.volumeName or ""

local function failedResize()
  for _, t in ipairs({"ControllerResizeError", "NodeResizeError"}) do
    local c = getCondition(obj, t)
    if c ~= nil and c.status == "True" then
      return c
    end
  end
  return nil
end

local resizeError = failedResize()
local fsResize = getCondition(obj, "FileSystemResizePending")
if status.phase == "Lost" then
  hs.status = "Degraded"
  hs.message = "The bound volume " .. volume .. " no longer exists"
elseif resizeError ~= nil then
  hs.status = "Degraded"
  hs.message = "Resize failed: " .. (resizeError.message or resizeError.type)
elseif status.phase == "Bound" then
  hs.status = "Healthy"
  hs.message = "Bound to volume " .. volume
  if fsResize ~= nil and fsResize.status == "True" then
    hs.message = hs.message .. "; the file system is resized when a pod next mounts it"
  end
elseif volume ~= "" then
  hs.status = "Progressing"
  hs.message = "Waiting to bind to volume " .. volume
else
  hs.status = "Progressing"
  hs.message = "Waiting for a volume to be provisioned or bound"
end
return hs
