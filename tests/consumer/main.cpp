// Out-of-tree consumer smoke test: loom must be usable through loom::loom alone.
#include <loom/loom.hpp>

int main() {
  loom::Tensor<float, 1> t(4);
  return t.extent(0) == 4 ? 0 : 1;
}
