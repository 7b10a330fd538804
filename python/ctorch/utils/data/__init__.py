"""ctorch.utils.data: datasets, samplers, DataLoader, random_split (as in PyTorch)."""
from .dataloader import DataLoader, default_collate, default_convert, get_worker_info  # noqa: F401
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,  # noqa: F401
                      TensorDataset, random_split)
from .distributed import DistributedSampler  # noqa: F401
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler)
