local hs = {resources = {}}
for _, d in ipairs(resources) do
  if d.status ~= nil and (d.status.availableReplicas or 0) == 0 then
    table.insert(hs.resources, {resource = d, status = "Degraded", message = "no replica available"})
  end
end
return hs
