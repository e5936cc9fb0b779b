-- CronJob.
-- kstatus reports every CronJob as current. This script also looks at the
-- last run: Degraded when the most recently scheduled job did not succeed
-- (no success recorded since it was scheduled, and none is running),
-- Suspended when spec.suspend is set. Timestamps are RFC 3339 in UTC, so
-- comparing them as strings orders them in time.
hs = {}
local status = obj.status or {}
local active = status.active or {}
local scheduled = status.lastScheduleTime
local succeeded = status.lastSuccessfulTime

if obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "CronJob is suspended"
elseif #active > 0 then
  hs.status = "Healthy"
  hs.message = string.format("%d job(s) running, scheduled at %s", #active, scheduled or "an unknown time")
elseif scheduled == nil then
  hs.status = "Healthy"
  hs.message = "No job scheduled yet (schedule " .. obj.spec.schedule .. ")"
elseif succeeded == nil or succeeded < scheduled then
  hs.status = "Degraded"
  hs.message = "The job scheduled at " .. scheduled .. " did not succeed"
  if succeeded ~= nil then
    hs.message = hs.message .. "; the last success was at " .. succeeded
  end
else
  hs.status = "Healthy"
  hs.message = "The job scheduled at " .. scheduled .. " succeeded at " .. succeeded
end
return hs
