#!/bin/bash
# A 2-member fleet on real PX4 SITL instances 6 and 7 (ports away from other users' instance 0), following docs/PX4_SITL.md section 5.
set -x
cd /work/wt-px4-runbook
A="env PYTHONPATH=$PWD /work/main/.venv/bin/python -m aerie"
F=/tmp/pxr-px4/fleet
rm -rf $F
$A fleet configs --members 2 --out $F --tasks t019 --step-limit 4 --px4-port 14546 --port-base 27700 --world tcp://127.0.0.1:27790 --dashboard-port 27795 || exit 1
$A world serve --config $F/vehicle1.yaml --task t019 > /tmp/pxr-px4/world.log 2>&1 &
WORLD=$!
$A ground --config $F/ground.yaml > /tmp/pxr-px4/ground.log 2>&1 &
GROUND=$!
B=/work/px4/PX4-Autopilot/build/px4_sitl_sih
PIDS=""
for i in 6 7; do
  mkdir -p /tmp/pxr-px4/instance_$i
  (cd /tmp/pxr-px4/instance_$i && env $(cat $F/px4_instance$((i-6)).env) PX4_SIM_MODEL=sihsim_quadx \
     $B/bin/px4 -i $i -d $B/etc > out.log 2>&1 & echo $! > /tmp/pxr-px4/px4_$i.pid)
done
for k in $(seq 1 120); do
  grep -q "Ready for takeoff" /tmp/pxr-px4/instance_6/out.log && grep -q "Ready for takeoff" /tmp/pxr-px4/instance_7/out.log && break
  sleep 1
done
grep -l "Ready for takeoff" /tmp/pxr-px4/instance_*/out.log
$A fly --config $F/vehicle1.yaml --mission $F/mission1.yaml --json $F/outcome1.json > /tmp/pxr-px4/fly1.log 2>&1 &
F1=$!
$A fly --config $F/vehicle2.yaml --mission $F/mission2.yaml --json $F/outcome2.json > /tmp/pxr-px4/fly2.log 2>&1 &
F2=$!
wait $F1; echo "fly1 rc=$?"
wait $F2; echo "fly2 rc=$?"
sleep 3
kill $GROUND $WORLD
kill $(cat /tmp/pxr-px4/px4_6.pid) $(cat /tmp/pxr-px4/px4_7.pid); true
