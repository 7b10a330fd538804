"""DistributedSampler: the share of a dataset's indices that one of num_replicas processes loads, padded
(or cut, with drop_last) to equal shares, reshuffled per epoch from seed + epoch as in PyTorch. ctorch has
no torch.distributed, so num_replicas and rank must be given."""
import math

from ... import _C
from .sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _C.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _C.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:  # repeat from the start until every replica gets num_samples
            pad = self.total_size - len(indices)
            indices += (indices * math.ceil(pad / len(indices)))[:pad] if pad > 0 else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, so that the next iteration uses a different shuffle."""
        self.epoch = epoch
