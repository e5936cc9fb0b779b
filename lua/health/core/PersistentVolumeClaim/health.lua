-- PersistentVolumeClaim, judged as Argo CD judges it: by status.phase
-- alone. Bound is Healthy, Pending Progressing, Lost (the bound volume is
-- gone) Degraded, anything else Unknown. The messages add what the
-- conditions say: a resize that failed or waits for a pod leaves a bound
-- claim Healthy, as in Argo CD. A claim whose storage class binds on first
-- use (WaitForFirstConsumer) stays Pending until a pod uses it: apply the
-- pod in the same wave, or health-check it with a script of your own.
local phase = (obj.status or {}).phase
local volume = obj.spec.volumeName or ""

local function resizeNote()
  for _, t in ipairs({"ControllerResizeError", "NodeResizeError"}) do
    local c = getCondition(obj, t)
    if c ~= nil and c.status == "True" then
      return "; resize failed: " .. (c.message or c.type)
    end
  end
  local pending = getCondition(obj, "FileSystemResizePending")
  if pending ~= nil and pending.status == "True" then
    return "; the file system is resized when a pod next mounts it"
  end
  return ""
end

if phase == "Bound" then
  return {status = "Healthy", message = "Bound to volume " .. volume .. resizeNote()}
elseif phase == "Lost" then
  return {status = "Degraded", message = "The bound volume " .. volume .. " no longer exists"}
elseif phase == "Pending" and volume ~= "" then
  return {status = "Progressing", message = "Waiting to bind to volume " .. volume}
elseif phase == "Pending" then
  return {status = "Progressing", message = "Waiting for a volume to be provisioned or bound"}
end
return {status = "Unknown", message = "status.phase is " .. tostring(phase)}
