#!/bin/bash
# MPI ranks (one per GPU) against the threaded plan and one GPU: CG, poisson3d 560^3, 100 iterations
# (SIDE, and NS: the GPU counts, default "2 4"); OUT=dir bash .gpu/mpi_gpu.sh
cd "$(dirname "$0")"  # run from the folder holding bin/hisp and bin/hisp-mpi (.gpu/)
S=${SIDE:-560}
A="gen:poisson3d:$S --method cg --rtol 1e-30 --maxit 100 --json"
{
nvidia-smi -L
echo "== 1 GPU"; timeout 150 ./bin/hisp solve $A --backend cuda > $OUT/one.json 2>&1; echo "exit $?"
for n in ${NS:-2 4}; do
  echo "== threaded plan, $n GPUs"; timeout 150 ./bin/hisp solve $A --backend cuda --devices $n > $OUT/plan$n.json 2>&1; echo "exit $?"
  echo "== MPI, $n ranks"; timeout 200 mpirun --allow-run-as-root --oversubscribe -np $n ./bin/hisp-mpi solve $A --mpi --backend cuda > $OUT/mpi$n.json 2>&1; echo "exit $?"
done
for f in one $(for n in ${NS:-2 4}; do echo plan$n mpi$n; done); do echo "$f: $(grep -E '"(iterations|ms_per_iteration|relative_residual|ranks|solve_ms)"' $OUT/$f.json | tr -d '\n ')"; done
} > $OUT/mpi.txt 2>&1
