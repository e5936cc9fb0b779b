-- Job, judged as Argo CD judges it: Progressing until the Job controller
-- reports an end, then Degraded when it failed (backoffLimit exceeded,
-- deadline exceeded, a pod failure policy), Healthy when it completed, and
-- Suspended while spec.suspend holds it. kstatus calls a started Job
-- Current, so without this script a Job that goes on to fail would count
-- as healthy the moment its first Pod ran.
local function result(code, message)
  return {status = code, message = message}
end

local status = obj.status or {}
local function condition(type)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == type and c.status == "True" then
      return c
    end
  end
  return nil
end

local failed = condition("Failed")
if failed ~= nil then
  return result("Degraded", string.format("Job failed: %s: %s", failed.reason or "", failed.message or ""))
end
local complete = condition("Complete")
if complete ~= nil then
  return result("Healthy", string.format("Job completed: %d succeeded", status.succeeded or 0))
end
local suspended = condition("Suspended")
if suspended ~= nil then
  return result("Suspended", "Job is suspended")
end
return result("Progressing", string.format("Job is running: %d active, %d succeeded, %d failed",
  status.active or 0, status.succeeded or 0, status.failed or 0))
